# The external libraries the parts link, as imported targets.  acc's own build includes this
# file, and so does the installed CMake package for find_package(acc COMPONENTS static): libacc.a
# names these targets in its link interface, so a consumer must look them up under the same
# names.  The CUDA libraries are not here: NVRTC and nvJitLink are opened at run time.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
pkg_check_modules(YAML REQUIRED IMPORTED_TARGET yaml-0.1)
pkg_check_modules(XML2 REQUIRED IMPORTED_TARGET libxml-2.0)
find_package(SQLite3 REQUIRED)
find_package(OpenSSL REQUIRED COMPONENTS Crypto)
find_package(Threads REQUIRED)
