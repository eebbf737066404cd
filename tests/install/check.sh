#!/usr/bin/env bash
# Installs a build of acc into an empty prefix and proves that a program outside the tree can
# use what it finds there:
#   - the prefix holds the public headers and acc.h, which include nothing but each other and
#     the C library's headers;
#   - libacc.so exports acc_* names only, each declared in an installed header, and defines
#     every function the installed headers declare;
#   - the NCCL tuner plugin exports ncclTunerPlugin_v4, _v5 and _v6 only, the drop-in NCCL NCCL's
#     names only, and both load from the prefix;
#   - tests/install/consumer.c builds with pkg-config and with find_package(acc), against
#     libacc.so and libacc.a, and all four programs print what the installed acc-compile says
#     of the same topology and plan.
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
nm -D --defined-only "$libdir/libacc.so" | awk '{print $3}' | sort -u >"$tmp/exported"
grep -v '^acc_' "$tmp/exported" &&
    fail "libacc.so exports the names above; only acc_* names are public (cmake/libacc.map)"
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
grep -oE '\bacc_[a-z0-9_]+\b' "$tmp/umbrella.i" | sort -u >"$tmp/named"
comm -23 "$tmp/exported" "$tmp/named" | grep . &&
    fail "libacc.so exports the names above, which no installed header declares; give them a part prefix or hide them"
comm -13 "$tmp/exported" "$tmp/declared" | grep . &&
    fail "the installed headers declare the functions above, which libacc.so does not define"

step "the NCCL-side libraries: exported names, loadable"
nm -D --defined-only "$libdir/libnccl-tuner-acc.so" | awk '{print $3}' | sort >"$tmp/tuner"
printf 'ncclTunerPlugin_v4\nncclTunerPlugin_v5\nncclTunerPlugin_v6\n' | diff -u - "$tmp/tuner" ||
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

step "consumer: libacc.a with acc.pc's Requires.private and Libs.private"
# What libacc.a needs beyond itself is exactly acc.pc's private fields: its Requires.private
# modules (linked as shared libraries) and its Libs.private flags.  `pkg-config --static` would
# also add each module's own private libraries for a fully static link (hwloc's -ludev, ...),
# which are no business of acc's and need not be installed here.
read -ra requires <<<"$(pkg-config --print-requires-private acc | awk '{print $1}' | tr '\n' ' ')"
[ ${#requires[@]} -gt 0 ] || fail "acc.pc has no Requires.private"
read -ra private_libs <<<"$(sed -n 's/^Libs\.private: *//p' "$pc")"
[ ${#private_libs[@]} -gt 0 ] || fail "acc.pc has no Libs.private"
read -ra requires_libs <<<"$(pkg-config --libs "${requires[@]}")"
"$cc" "${flags[@]}" "${pc_cflags[@]}" "$here/consumer.c" -o "$tmp/consumer-pc-static" \
    "$libdir/libacc.a" "${requires_libs[@]}" "${private_libs[@]}"

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
echo "install check: passed"
