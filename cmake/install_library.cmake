# cronwheel_install_library(<target> <export name>)
# Installs a static library of common/ that the executor library links, into the export set of
# the CMake package (cronwheel::<export name>) and the libcronwheel-executor-dev package. A
# static library's private dependencies are still needed when the final program is linked, so
# cronwheel::executor names them as $<LINK_ONLY:...>; their headers are not installed, since
# the executor's public header does not include them. Nothing is installed without the executor.
function(cronwheel_install_library target export_name)
  if(NOT CRONWHEEL_BUILD_EXECUTOR)
    return()
  endif()
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name})
  install(TARGETS ${target} EXPORT cronwheel-targets
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
endfunction()
