# Every dependency comes from a Debian package (scripts/setup.sh installs them).
find_package(PkgConfig REQUIRED)
pkg_check_modules(SimGrid REQUIRED IMPORTED_TARGET simgrid>=3.32)
find_package(Boost 1.74 REQUIRED)            # Boost.Graph algorithms used here are header-only
find_package(yaml-cpp 0.7 REQUIRED CONFIG)   # target: yaml-cpp
find_package(nlohmann_json 3.10 REQUIRED CONFIG)
find_package(CLI11 2.1 REQUIRED CONFIG)
