# cmake/walls.cmake -- the walls between folders, kept by the compiler.
#
# gvw_walls(TARGET [DIR folder] [EXPORTS header...]): TARGET's sources see every
# header of their own folder (DIR, default the current one). Other folders see only the headers listed in EXPORTS, through
# a directory of links under build/exports/<folder>/ that TARGET publishes; an
# unlisted header (the folder's internals) does not compile from outside. A
# white-box test reaches a folder's internals on purpose: gvw_add_test(... WHITE_BOX
# folder). Two libraries in one folder both call this; only one lists EXPORTS.
function(gvw_walls target)
  cmake_parse_arguments(W "" "DIR" "EXPORTS" ${ARGN})
  set(src ${CMAKE_CURRENT_SOURCE_DIR})
  if(W_DIR)
    set(src ${CMAKE_CURRENT_SOURCE_DIR}/${W_DIR})
  endif()
  target_include_directories(${target} PRIVATE ${src})
  if(NOT W_EXPORTS)
    return()
  endif()
  file(RELATIVE_PATH folder ${CMAKE_SOURCE_DIR} ${src})
  set(dir ${CMAKE_BINARY_DIR}/exports/${folder})
  file(MAKE_DIRECTORY ${dir})
  foreach(header ${W_EXPORTS})
    if(NOT EXISTS ${src}/${header})
      message(FATAL_ERROR "gvw_walls(${target}): ${folder}/${header} is exported but does not exist")
    endif()
    file(CREATE_LINK ${src}/${header} ${dir}/${header} SYMBOLIC COPY_ON_ERROR)
  endforeach()
  target_include_directories(${target} PUBLIC ${dir})
endfunction()
