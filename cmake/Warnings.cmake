# Warnings as an INTERFACE target that every clustersim target links PRIVATE.
add_library(clustersim_warnings INTERFACE)
add_library(clustersim::warnings ALIAS clustersim_warnings)
target_compile_options(clustersim_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wold-style-cast -Wcast-align
  -Woverloaded-virtual -Wnull-dereference -Wdouble-promotion -Wformat=2 -Wimplicit-fallthrough)

add_library(clustersim_options INTERFACE)
add_library(clustersim::options ALIAS clustersim_options)
if(CLUSTERSIM_SANITIZE)
  target_compile_options(clustersim_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer)
  target_link_options(clustersim_options INTERFACE -fsanitize=address,undefined)
  target_compile_definitions(clustersim_options INTERFACE CLUSTERSIM_SANITIZE=1)
endif()
