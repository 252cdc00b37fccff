# Install-time step (included by install(CODE) in the top-level
# CMakeLists.txt): split the installed kconnectd into a stripped binary and
# a separate debug file, as Debian's dh_strip does.
#
# In:  KC_SPLIT_BUILT   the linked binary of the build tree (with its debug info)
#      KC_SPLIT_BIN     the installed binary, relative to the prefix (bin/kconnectd)
#      KC_OBJCOPY       objcopy
#      KC_READELF       readelf (for the build-id link; skipped if empty)
# Out: <prefix>/lib/debug/<KC_SPLIT_BIN>.debug (e.g. lib/debug/bin/kconnectd.debug):
#      the debug sections and the symbol table (objcopy --only-keep-debug);
#      <prefix>/lib/debug/.build-id/NN/REST.debug: a relative symlink to it,
#      where gdb looks up a binary's debug file by its GNU build-id;
#      the installed binary: every symbol and debug section removed
#      (--strip-all), plus a .gnu_debuglink naming the debug file (with its
#      CRC), which gdb follows too.
# The debug info is taken from the build tree's binary, so that a
# `cmake --install --strip` (which strips the installed copy first) still
# yields a complete debug file.
set(_prefix "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(_bin "${_prefix}/${KC_SPLIT_BIN}")
set(_dbg "${_prefix}/lib/debug/${KC_SPLIT_BIN}.debug")
if(NOT KC_OBJCOPY)
  message(WARNING "kconnectd: no objcopy found; ${_bin} is installed unstripped")
  return()
endif()
get_filename_component(_dbg_dir "${_dbg}" DIRECTORY)
file(MAKE_DIRECTORY "${_dbg_dir}")
message(STATUS "Installing: ${_dbg}")
execute_process(COMMAND "${KC_OBJCOPY}" --only-keep-debug "${KC_SPLIT_BUILT}" "${_dbg}"
                RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "objcopy --only-keep-debug ${KC_SPLIT_BUILT} failed: ${_err}")
endif()
file(CHMOD "${_dbg}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# --add-gnu-debuglink stores the file's base name; run from its directory.
get_filename_component(_dbg_name "${_dbg}" NAME)
execute_process(COMMAND "${KC_OBJCOPY}" --strip-all "--add-gnu-debuglink=${_dbg_name}" "${_bin}"
                WORKING_DIRECTORY "${_dbg_dir}" RESULT_VARIABLE _rc ERROR_VARIABLE _err)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "objcopy --strip-all ${_bin} failed: ${_err}")
endif()
message(STATUS "Stripped: ${_bin} (debug info in ${_dbg})")

# The build-id link, when the linker wrote a build-id (GCC on Debian does).
if(KC_READELF)
  execute_process(COMMAND "${KC_READELF}" -n "${_bin}" OUTPUT_VARIABLE _notes RESULT_VARIABLE _rc ERROR_QUIET)
  if(_rc EQUAL 0 AND _notes MATCHES "Build ID: ([0-9a-f][0-9a-f])([0-9a-f]+)")
    set(_link_dir "${_prefix}/lib/debug/.build-id/${CMAKE_MATCH_1}")
    set(_link "${_link_dir}/${CMAKE_MATCH_2}.debug")
    file(MAKE_DIRECTORY "${_link_dir}")
    file(RELATIVE_PATH _target "${_link_dir}" "${_dbg}")
    file(REMOVE "${_link}")
    file(CREATE_LINK "${_target}" "${_link}" SYMBOLIC)
    message(STATUS "Installing: ${_link} -> ${_target}")
  endif()
endif()
