#!/usr/bin/env bash
# Installs a build of acc into an empty prefix and proves that a program outside the tree can
# use what it finds there:
#   - the prefix holds the public headers and acc.h, which include nothing but each other and
#     the C library's headers;
#   - libacc.so exports exactly the functions the installed headers declare, which are the
#     list of cmake/libacc.map, and neither it nor the NCCL-side libraries export a name of
#     the OpenACC API (libgomp's);
#   - the NCCL tuner plugin exports ncclTunerPlugin_v4, _v5, _v6 and _v7 only, the drop-in NCCL
#     NCCL's names only, and both load from the prefix;
#   - tests/install/consumer.c builds with pkg-config and with find_package(acc), against
#     libacc.so and libacc.a, and all four programs print what the installed acc-compile says
#     of the same topology and plan;
#   - moved to another prefix, the installation still works from there: the consumer builds
#     with its acc.pc and reads the platforms beside its libacc.so, the tools read their
#     platforms and model profiles, and a job finds share/acc/acc.db of the new prefix (the
#     install builds it: the tables of the shipped default platform).
# Usage: tests/install/check.sh BUILD_DIR   (a built tree, configured without ACC_SANITIZE and
# ACC_FUZZ: a sanitized libacc.so cannot be loaded by an unsanitized program).
set -euo pipefail

fail() {
    echo "install check: FAILED: $*" >&2
    exit 1
}
step() { echo "-- $*"; }

[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
[ -f "$1/CMakeCache.txt" ] || fail "$1 is not a configured build directory (cmake -S . -B $1)"
build=$(cd "$1" && pwd)
if grep -qE '^ACC_(SANITIZE|FUZZ):BOOL=(ON|1|TRUE)' "$build/CMakeCache.txt"; then
    fail "$build is a sanitizer or fuzzing build; check a plain build instead"
fi
here=$(cd "$(dirname "$0")" && pwd)
cc=${CC:-cc}
topology="gpus=8 nvlink=18"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

step "cmake --install $build --prefix <tmp>"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }

pc=$(find "$prefix" -name acc.pc)
[ -n "$pc" ] || fail "no acc.pc under the prefix"
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(pkg-config --variable=libdir acc)
includedir=$(pkg-config --variable=includedir acc)
for f in "$libdir/libacc.so" "$libdir/libacc.a" "$includedir/acc/acc.h" \
    "$libdir/cmake/acc/accConfig.cmake" "$libdir/cmake/acc/accConfigVersion.cmake" \
    "$prefix/bin/acc-compile" "$prefix/bin/acc-info" "$prefix/bin/acc-tune" \
    "$prefix/bin/acc-bench" "$libdir/libnccl-tuner-acc.so" "$libdir/libacc-nccl.so"; do
    [ -e "$f" ] || fail "${f#"$prefix"/} was not installed"
done

step "headers: public only, self-contained"
for h in "$includedir"/acc/*.h; do
    grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*<' "$h" |
        grep -vE '<(assert|complex|ctype|errno|fenv|float|inttypes|iso646|limits|locale|math|setjmp|signal|stdalign|stdarg|stdatomic|stdbool|stddef|stdint|stdio|stdlib|stdnoreturn|string|tgmath|threads|time|uchar|wchar|wctype)\.h>' &&
        fail "${h#"$prefix"/} includes a header outside the C library (above); it must not be installed or must not need it"
    sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$h" >"$tmp/includes"
    while read -r inc; do
        [ -f "$includedir/acc/$inc" ] ||
            fail "${h#"$prefix"/} includes \"$inc\", which is not installed"
    done <"$tmp/includes"
done

step "libacc.so: exported names"
nm -D --defined-only "$libdir/libacc.so" | awk '{print $3}' | sed 's/@.*//' | sort -u >"$tmp/exported"
# The functions the installed headers declare, from the preprocessed umbrella header (no
# comments, no macros): every name followed by '(' minus the static inline ones, which are
# defined in the header itself.
read -ra pc_cflags <<<"$(pkg-config --cflags acc)"
printf '#include <acc/acc.h>\n' >"$tmp/umbrella.c"
"$cc" -std=c11 -E -P "${pc_cflags[@]}" "$tmp/umbrella.c" >"$tmp/umbrella.i"
grep -oE '\bacc_[a-z0-9_]+\(' "$tmp/umbrella.i" | tr -d '(' | sort -u >"$tmp/called"
grep -oE 'static inline [^(;]*\bacc_[a-z0-9_]+\(' "$tmp/umbrella.i" |
    grep -oE 'acc_[a-z0-9_]+\($' | tr -d '(' | sort -u >"$tmp/inline"
comm -23 "$tmp/called" "$tmp/inline" >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "found no function declared in the installed headers"
comm -23 "$tmp/exported" "$tmp/declared" | grep . &&
    fail "libacc.so exports the names above, which no installed header declares; give them a part prefix, or declare them and list them in cmake/libacc.map"
comm -13 "$tmp/exported" "$tmp/declared" | grep . &&
    fail "the installed headers declare the functions above, which libacc.so does not export; define them and list them in cmake/libacc.map"
# The version script is the ABI's record: its list is the headers' list.
sed -nE 's/^[[:space:]]+(acc_[a-z0-9_]+);$/\1/p' "$here/../../cmake/libacc.map" | sort >"$tmp/map"
diff -u "$tmp/declared" "$tmp/map" ||
    fail "cmake/libacc.map does not list exactly the functions the installed headers declare (-: declared, not listed; +: listed, not declared)"

step "no library exports a name of the OpenACC API"
# The OpenACC 3.3 specification's runtime library routines (its chapter 3), the profiling
# interface's entry points (chapter 5) and names of earlier versions that implementations still
# export: libgomp (GCC) and NVIDIA's OpenACC runtime put these into every process that loads
# them, so a library exporting one takes their callers' calls or gives its own away.
cat >"$tmp/openacc" <<'EOF'
acc_async_test acc_async_test_all acc_async_test_all_device acc_async_test_device
acc_async_wait acc_async_wait_all acc_attach acc_attach_async acc_copyin acc_copyin_async
acc_copyout acc_copyout_async acc_copyout_finalize acc_copyout_finalize_async acc_create
acc_create_async acc_delete acc_delete_async acc_delete_finalize acc_delete_finalize_async
acc_detach acc_detach_async acc_detach_finalize acc_detach_finalize_async acc_deviceptr
acc_free acc_get_cuda_stream acc_get_current_cuda_context acc_get_current_cuda_device
acc_get_default_async acc_get_device_num acc_get_device_type acc_get_num_devices
acc_get_property acc_get_property_string acc_hostptr acc_init acc_init_device acc_is_present
acc_malloc acc_map_data acc_memcpy_d2d acc_memcpy_d2d_async acc_memcpy_device
acc_memcpy_device_async acc_memcpy_from_device acc_memcpy_from_device_async
acc_memcpy_to_device acc_memcpy_to_device_async acc_on_device acc_pcopyin acc_pcreate
acc_present_or_copyin acc_present_or_create acc_prof_lookup acc_prof_register
acc_prof_unregister acc_register_library acc_set_cuda_stream acc_set_default_async
acc_set_device_num acc_set_device_type acc_shutdown acc_shutdown_device acc_unmap_data
acc_update_device acc_update_device_async acc_update_self acc_update_self_async acc_wait
acc_wait_all acc_wait_all_async acc_wait_all_device acc_wait_all_device_async acc_wait_any
acc_wait_any_device acc_wait_async acc_wait_device acc_wait_device_async
EOF
tr -s ' ' '\n' <"$tmp/openacc" | grep . >"$tmp/openacc.list"
against="the OpenACC 3.3 API's routines"
gomp=$("$cc" -print-file-name=libgomp.so.1)
if [ -f "$gomp" ]; then
    # And whatever this machine's libgomp exports under acc_ (its Fortran entry points too).
    nm -D --defined-only "$gomp" | awk '$3 ~ /^acc_/ {sub(/@.*/, "", $3); print $3}' >>"$tmp/openacc.list"
    against="$against or exported by $gomp"
else
    echo "   no libgomp.so.1 beside $cc: checked against the OpenACC 3.3 names only"
fi
sort -u -o "$tmp/openacc.list" "$tmp/openacc.list"
for so in libacc.so libnccl-tuner-acc.so libacc-nccl.so; do
    nm -D --defined-only "$libdir/$so" | awk '{print $3}' | sed 's/@.*//' | sort -u |
        comm -12 - "$tmp/openacc.list" | grep . &&
        fail "$so exports the names above, which are $against"
done

step "the NCCL-side libraries: exported names, loadable"
nm -D --defined-only "$libdir/libnccl-tuner-acc.so" | awk '{print $3}' | sort >"$tmp/tuner"
printf 'ncclTunerPlugin_v4\nncclTunerPlugin_v5\nncclTunerPlugin_v6\nncclTunerPlugin_v7\n' | diff -u - "$tmp/tuner" ||
    fail "libnccl-tuner-acc.so exports other names than NCCL's plugin symbols (above)"
nm -D --defined-only "$libdir/libacc-nccl.so" | awk '{print $3}' | grep -vE '^p?nccl[A-Z]' &&
    fail "libacc-nccl.so exports the names above; only NCCL's API is public (dropin.map)"
cat >"$tmp/load.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    return argc == 2 && dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) ? 0 : (puts(dlerror()), 1);
}
EOF
"$cc" -std=c11 "$tmp/load.c" -o "$tmp/load" -ldl
for so in libnccl-tuner-acc.so libacc-nccl.so; do
    "$tmp/load" "$libdir/$so" || fail "$so does not load from the prefix (above)"
done

step "consumer: pkg-config, libacc.so"
flags=(-std=c11 -Wall -Wextra -pedantic -Werror)
read -ra pc_libs <<<"$(pkg-config --libs acc)"
"$cc" "${flags[@]}" "${pc_cflags[@]}" "$here/consumer.c" -o "$tmp/consumer-pc-shared" \
    "${pc_libs[@]}" -Wl,-rpath,"$libdir"

step "consumer: libacc.a with pkg-config --static"
# What libacc.a needs beyond itself is acc.pc's Libs.private: the system's libraries by name,
# no directory of the build machine (NVRTC and nvJitLink are opened at run time).
grep -q '^Requires' "$pc" && fail "acc.pc has Requires fields, which pkg-config --static expands into the dependencies' own static dependencies (hwloc's -ludev)"
grep -E '^(Libs|Libs.private|Cflags):' "$pc" | grep -E -- '-[LI]/' &&
    fail "acc.pc names directories of the build machine (above)"
static_flags=$(pkg-config --static --libs acc) || fail "pkg-config --static --libs acc failed"
# The prefix holds libacc.so too, which -lacc would take: name the archive instead.
read -ra static_libs <<<"${static_flags/-lacc/$libdir/libacc.a}"
"$cc" "${flags[@]}" "${pc_cflags[@]}" "$here/consumer.c" -o "$tmp/consumer-pc-static" \
    "${static_libs[@]}" ||
    fail "the consumer does not link with libacc.a and pkg-config --static --libs acc ($static_flags)"

for kind in shared static; do
    step "consumer: find_package(acc), $kind library"
    static=OFF
    [ "$kind" = static ] && static=ON
    cmake -S "$here" -B "$tmp/cmake-$kind" -DCMAKE_PREFIX_PATH="$prefix" \
        -DACC_CONSUMER_STATIC=$static -DCMAKE_C_COMPILER="$cc" >"$tmp/cmake-$kind.log" 2>&1 ||
        { cat "$tmp/cmake-$kind.log" >&2; fail "find_package(acc) build ($kind) did not configure"; }
    cmake --build "$tmp/cmake-$kind" >>"$tmp/cmake-$kind.log" 2>&1 ||
        { cat "$tmp/cmake-$kind.log" >&2; fail "find_package(acc) build ($kind) did not build"; }
    cp "$tmp/cmake-$kind/consumer" "$tmp/consumer-cmake-$kind"
done

step "run the consumers"
# What the installed acc-compile says of the same topology and plan.
fingerprint=$("$prefix/bin/acc-compile" --topo "$topology" --print-topo |
    awk '$1 == "Fingerprint" {print $2}')
ops=$("$prefix/bin/acc-compile" --topo "$topology" --coll allreduce --algo ring \
    --emit-plan "$tmp/ring.yaml" | grep -oE '[0-9]+ operations' | grep -oE '[0-9]+')
if [ -z "$fingerprint" ] || [ -z "$ops" ]; then
    fail "the installed acc-compile did not print a fingerprint and an operation count"
fi
cat >"$tmp/expected" <<EOF
acc $(pkg-config --modversion acc)
topology $topology: 8 ranks, fingerprint $fingerprint
allreduce ring: $ops operations, verified
EOF
for kind in pc-shared pc-static cmake-shared cmake-static; do
    exe=$tmp/consumer-$kind
    "$exe" >"$tmp/out-$kind" || fail "consumer-$kind exited with status $?"
    diff -u "$tmp/expected" "$tmp/out-$kind" || fail "consumer-$kind printed something else (above)"
    needs_libacc=$(readelf -d "$exe" | grep -c 'NEEDED.*\[libacc\.so' || true)
    case $kind in
    *-shared) [ "$needs_libacc" = 1 ] || fail "consumer-$kind does not load libacc.so" ;;
    *-static) [ "$needs_libacc" = 0 ] || fail "consumer-$kind loads libacc.so; it should contain libacc.a" ;;
    esac
done
cat "$tmp/out-pc-shared"

# ---- a moved installation ----------------------------------------------------------------------
# An image build installs to one prefix and copies the tree elsewhere; nothing may still point
# at the first place (which is gone) or at the source tree.
step "the prefix moved: the consumer built and run from there"
moved=$tmp/moved/opt-acc
mkdir -p "$tmp/moved"
mv "$prefix" "$moved"
PKG_CONFIG_PATH=$moved/${pc#"$prefix"/}
PKG_CONFIG_PATH=$(dirname "$PKG_CONFIG_PATH")
libdir=$(pkg-config --variable=libdir acc)
case $(cd "$libdir" && pwd) in "$moved"/*) ;; *) fail "acc.pc in the moved prefix names $libdir" ;; esac
read -ra pc_cflags <<<"$(pkg-config --cflags acc)"
read -ra pc_libs <<<"$(pkg-config --libs acc)"
"$cc" "${flags[@]}" "${pc_cflags[@]}" "$here/consumer.c" -o "$tmp/consumer-moved" \
    "${pc_libs[@]}" -Wl,-rpath,"$libdir"
"$tmp/consumer-moved" dgx-h100 >"$tmp/out-moved" || fail "the consumer failed in the moved prefix"
grep -qx "platform dgx-h100: 8 ranks, from $moved/share/acc/platforms" "$tmp/out-moved" ||
    { cat "$tmp/out-moved"; fail "libacc.so in the moved prefix does not read its own platforms (above)"; }

step "the prefix moved: its tools read their own data"
"$moved/bin/acc-info" --platforms | grep -qx "Platforms in $moved/share/acc/platforms:" ||
    fail "acc-info in the moved prefix reads platforms from elsewhere: $("$moved/bin/acc-info" --platforms | head -1)"
"$moved/bin/acc-info" --models | grep -qx "Model profiles in $moved/share/acc/models:" ||
    fail "acc-info in the moved prefix reads model profiles from elsewhere: $("$moved/bin/acc-info" --models | head -1)"
"$moved/bin/acc-compile" --topo dgx-h100 --coll allreduce --algo ring --emit-plan "$tmp/moved.yaml" |
    grep -q "on $moved/share/acc/platforms/dgx-h100.yaml" ||
    fail "acc-compile in the moved prefix does not take dgx-h100 from it"

step "the prefix moved: a job finds the database in it"
unset ACC_DB ACC_PLATFORM_DIR ACC_MODEL_DIR
# The install carries the database of the shipped default platform (dgx-h100), which a job of
# eight ranks on that machine reads without ACC_DB; another machine's job finds the file and
# says it holds no tables for it (not that there is no database).
[ -f "$moved/share/acc/acc.db" ] || fail "share/acc/acc.db was not installed"
"$moved/bin/acc-info" --db "$moved/share/acc/acc.db" | grep -q "^  dgx-h100 (" ||
    fail "the installed share/acc/acc.db holds no tables of dgx-h100"
bench=("$moved/bin/acc-bench" --runtime host --nranks 2 --topo "gpus=2 nvlink=18" -b 1K -e 1K -n 1)
if [ ! -e /etc/acc/acc.db ]; then
    ACC_LOG_LEVEL=error "${bench[@]}" >"$tmp/bench-none" 2>&1 || fail "acc-bench failed on another machine's database"
    grep -q "database $moved/share/acc/acc.db has no tables for this machine" "$tmp/bench-none" ||
        { cat "$tmp/bench-none"; fail "a job does not find share/acc/acc.db of the moved prefix (above)"; }
fi
"$moved/bin/acc-compile" --topo "gpus=2 nvlink=18" --db "$moved/share/acc/acc.db" >/dev/null
ACC_LOG_LEVEL=error "${bench[@]}" >"$tmp/bench-db" 2>&1 || fail "acc-bench failed with the moved prefix's database"
if [ ! -e /etc/acc/acc.db ] && grep -q "every call takes the fallback" "$tmp/bench-db"; then
    cat "$tmp/bench-db"
    fail "a job does not read share/acc/acc.db of the moved prefix (above)"
fi
echo "install check: passed"
