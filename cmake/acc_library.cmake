# libacc: every part in one library, shared (libacc.so) and static (libacc.a), and what
# `cmake --install` puts where: the library, the public headers in include/acc/, the umbrella
# acc.h, acc.pc for pkg-config and the CMake package (find_package(acc) -> acc::acc).
# In-tree programs and tests keep linking the parts; libacc is built from the parts' own
# objects, so nothing is compiled twice.
include(CMakePackageConfigHelpers)

set(ACC_CMAKE_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/acc)

# ---- the parts' objects and the external libraries they link ------------------------------

set(acc_objects)
set(acc_external_libs)
foreach(part ${ACC_PARTS})
  list(APPEND acc_objects $<TARGET_OBJECTS:acc_${part}>)
  get_target_property(links acc_${part} LINK_LIBRARIES)
  foreach(item ${links})
    if(NOT item MATCHES "^acc_")
      list(APPEND acc_external_libs ${item})
    endif()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES acc_external_libs)

# What a program linking libacc.a statically needs beyond it, for acc.pc's Libs.private: each
# external library as -l<name> of the file the build linked (the imported targets' own files),
# -pthread for the threads, and -L<dir> only for a directory outside the linker's own search
# path, so that the file names no directory of the build machine on a standard system.  Not
# Requires.private: `pkg-config --static` would pull in each module's private libraries for a
# fully static link (hwloc's -ludev, libxml2's ICU), which need not be installed where libacc.a
# is linked against the system's shared libraries, and which acc does not use.  A part that
# starts linking something this cannot express stops the configuration here, so that acc.pc
# cannot fall behind the build.
set(acc_pc_libs)
function(acc_pc_file file)
  get_filename_component(name ${file} NAME)
  if(NOT name MATCHES "^lib(.+)\\.(so|a)[.0-9]*$")
    message(FATAL_ERROR "cmake/acc_library.cmake cannot express '${file}' in acc.pc")
  endif()
  set(flags -l${CMAKE_MATCH_1})
  get_filename_component(dir ${file} DIRECTORY)
  if(NOT dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    list(PREPEND flags -L${dir})
  endif()
  set(acc_pc_libs ${acc_pc_libs} ${flags} PARENT_SCOPE)
endfunction()
foreach(item ${acc_external_libs})
  if(item STREQUAL "Threads::Threads")
    list(APPEND acc_pc_libs -pthread)
  elseif(item MATCHES "^PkgConfig::")
    get_target_property(links ${item} INTERFACE_LINK_LIBRARIES)
    foreach(link ${links})
      if(IS_ABSOLUTE "${link}")
        acc_pc_file(${link})
      elseif(link MATCHES "^-l")
        list(APPEND acc_pc_libs ${link})
      endif()
    endforeach()
  elseif(TARGET ${item})
    get_target_property(file ${item} IMPORTED_LOCATION)
    if(NOT file)
      get_target_property(file ${item} IMPORTED_LOCATION_RELEASE)
    endif()
    if(NOT file)
      message(FATAL_ERROR "a part links '${item}', whose file cmake/acc_library.cmake cannot "
                          "find for acc.pc")
    endif()
    acc_pc_file(${file})
  elseif(item MATCHES "^[A-Za-z0-9_.+-]+$")
    list(APPEND acc_pc_libs -l${item})
  elseif(IS_ABSOLUTE "${item}")
    acc_pc_file(${item})
  else()
    message(FATAL_ERROR "a part links '${item}', which cmake/acc_library.cmake cannot express "
                        "in acc.pc")
  endif()
endforeach()
list(REMOVE_DUPLICATES acc_pc_libs)

# ---- libacc.so and libacc.a -------------------------------------------------------------------

add_library(acc_shared SHARED ${acc_objects})
add_library(acc_static STATIC ${acc_objects})
foreach(lib acc_shared acc_static)
  set_target_properties(${lib} PROPERTIES OUTPUT_NAME acc LINKER_LANGUAGE C)
  target_link_libraries(${lib} PRIVATE ${acc_external_libs})
  target_include_directories(${lib} INTERFACE $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()
set_target_properties(acc_shared PROPERTIES EXPORT_NAME acc)

# Before 1.0 any minor release may change the ABI, so the SONAME carries major.minor
# (libacc.so.0.1).  The version script lists the exported functions one by one: exactly those
# the installed headers declare (tests/install/check.sh compares them), none of another
# library's namespace such as OpenACC's acc_* in libgomp.
# -Bsymbolic-functions binds the library's calls to its own functions inside it: a process that
# loaded a library exporting one of the same names first (libgomp before libacc, as PyTorch
# does) keeps its own, and libacc keeps its own.  Every exported symbol is a function.
set_target_properties(acc_shared PROPERTIES
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}
  LINK_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/libacc.map)
target_link_options(acc_shared PRIVATE
  "LINKER:--version-script=${CMAKE_CURRENT_LIST_DIR}/libacc.map"
  "LINKER:-Bsymbolic-functions")
# Every symbol the library needs must come from a library it names.  The sanitizer and fuzzer
# runtimes are linked into programs, never into shared libraries, so those builds leave theirs
# undefined.
if(NOT ACC_INSTRUMENTED)
  target_link_options(acc_shared PRIVATE "LINKER:--no-undefined")
endif()

# ---- public headers -----------------------------------------------------------------------

# Every <part>/include/acc_*.h is installed in include/acc/, except these: acc_yaml.h exposes
# libyaml's types, which the project uses internally and does not promise to consumers; acc_svg.h
# is the small SVG writer every picture shares, not an API.
set(acc_uninstalled_headers acc_yaml.h acc_svg.h)
set(ACC_INSTALLED_HEADERS)
set(acc_header_names)
set(acc_include_dirs ${CMAKE_SOURCE_DIR}/include)
foreach(part ${ACC_PARTS})
  list(APPEND acc_include_dirs ${CMAKE_SOURCE_DIR}/${part}/include)
  file(GLOB headers CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/${part}/include/acc_*.h)
  foreach(header ${headers})
    get_filename_component(name ${header} NAME)
    if(NOT name IN_LIST acc_uninstalled_headers)
      list(APPEND ACC_INSTALLED_HEADERS ${header})
      list(APPEND acc_header_names ${name})
    endif()
  endforeach()
endforeach()

# The umbrella header includes exactly the installed headers: a new public header that acc.h
# does not name, or a name acc.h keeps after its header went, stops the configuration.
set(acc_umbrella ${CMAKE_SOURCE_DIR}/include/acc.h)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${acc_umbrella})
file(STRINGS ${acc_umbrella} umbrella_lines REGEX "^#include \"acc_[a-z_]+\\.h\"")
set(acc_umbrella_names)
foreach(line ${umbrella_lines})
  string(REGEX MATCH "acc_[a-z_]+\\.h" name ${line})
  list(APPEND acc_umbrella_names ${name})
endforeach()
set(missing ${acc_header_names})
list(REMOVE_ITEM missing ${acc_umbrella_names})
set(extra ${acc_umbrella_names})
list(REMOVE_ITEM extra ${acc_header_names})
if(missing OR extra)
  message(FATAL_ERROR "include/acc.h must include every installed header and no other: "
                      "missing '${missing}', not installed '${extra}' (see acc_uninstalled_headers "
                      "in cmake/acc_library.cmake)")
endif()

# Each installed header, and acc.h, compiles on its own in strict ISO C11 without the project's
# _GNU_SOURCE (-U after the directory's -D cancels it): one translation unit per header, built
# with every build.
set(acc_header_checks)
foreach(name acc.h ${acc_header_names})
  string(MAKE_C_IDENTIFIER ${name} stem)
  set(src ${CMAKE_CURRENT_BINARY_DIR}/header_check/${stem}.c)
  file(CONFIGURE OUTPUT ${src} CONTENT "#include \"${name}\"\n")
  list(APPEND acc_header_checks ${src})
endforeach()
add_library(acc_header_check OBJECT ${acc_header_checks})
target_compile_options(acc_header_check PRIVATE -U_GNU_SOURCE -pedantic)
target_include_directories(acc_header_check PRIVATE ${acc_include_dirs})

# ---- install --------------------------------------------------------------------------------

install(TARGETS acc_shared EXPORT accTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS acc_static EXPORT accStaticTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(FILES ${acc_umbrella} ${ACC_INSTALLED_HEADERS}
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/acc)

install(EXPORT accTargets NAMESPACE acc:: DESTINATION ${ACC_CMAKE_INSTALL_DIR})
install(EXPORT accStaticTargets NAMESPACE acc:: DESTINATION ${ACC_CMAKE_INSTALL_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/accConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/accConfig.cmake INSTALL_DESTINATION ${ACC_CMAKE_INSTALL_DIR})
# Before 1.0 only the same minor version is compatible, as for the SONAME.
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/accConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/accConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/accConfigVersion.cmake
              ${CMAKE_CURRENT_LIST_DIR}/acc_dependencies.cmake
        DESTINATION ${ACC_CMAKE_INSTALL_DIR})

# acc.pc finds its prefix from its own place (${pcfiledir}), so that `cmake --install --prefix`
# anywhere gives a working file.
foreach(dir CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_INCLUDEDIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir}=${${dir}}: acc.pc needs it relative to the install prefix")
  endif()
endforeach()
file(RELATIVE_PATH ACC_PC_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" ACC_PC_PREFIX "\${pcfiledir}/${ACC_PC_PREFIX}")
list(JOIN acc_pc_libs " " ACC_PC_LIBS_PRIVATE)
configure_file(${CMAKE_CURRENT_LIST_DIR}/acc.pc.in ${CMAKE_CURRENT_BINARY_DIR}/acc.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/acc.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
