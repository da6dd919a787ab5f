#!/bin/sh
# cmake --install of a build into a fresh prefix, then the installed binary run from elsewhere
# with no CLUSTERSIM_DATA: it must name PREFIX/share/clustersim as its data and run an experiment
# from there. Usage: test_install.sh CMAKE BUILD_DIR
set -eu
cmake=$1
build=$2
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
"$cmake" --install "$build" --prefix "$prefix/usr" > "$prefix/install.log"
unset CLUSTERSIM_DATA
cd "$prefix"
mv usr moved # a prefix moved after installing still finds its data
version=$(./moved/bin/clustersim --version)
echo "$version"
case "$version" in
*"data: $prefix/moved/share/clustersim"*) ;;
*) echo "FAIL: the installed binary does not read its own share/clustersim" >&2; exit 1 ;;
esac
# the platform and the model are named, so both come from the installed catalog
printf 'name: installed\nmodel: gpt3-1.3b\ncluster: {platform: dgx-a100-80gb, gpus: 16}\ntraining: {tp: 2, pp: 2, dp: 4, micro_batch: 1, global_batch: 32}\n' > small.yaml
./moved/bin/clustersim run small.yaml --json > run.json
grep -q '"step_time_s"' run.json || { echo "FAIL: no step time in the installed binary's run" >&2; exit 1; }
test -f moved/share/clustersim/experiments/quickstart.yaml || { echo "FAIL: the experiments are not installed" >&2; exit 1; }
echo "installed under $prefix/usr, moved to $prefix/moved, ran a 16-GPU step from its catalog"
