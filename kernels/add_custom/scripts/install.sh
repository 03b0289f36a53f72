#!/bin/sh
# The installer of the add_custom source package (run by the .run after it extracts itself, with
# the working directory at the extracted files). It follows the CANN operator project template's
# scripts/install.sh (CANN 8.1.RC1, tools/op_project_templates/ascendc/customize/scripts/install.sh):
#   --install-path=DIR (absolute): copy packages/vendors/<vendor>/ to DIR/vendors/<vendor>/ and
#     write DIR/vendors/<vendor>/bin/set_env.bash, which puts the vendor first on
#     ASCEND_CUSTOM_OPP_PATH; vendors/config.ini is not touched;
#   no --install-path: into $ASCEND_OPP_PATH/vendors/<vendor>/, the vendor put first on the
#     load_priority line of $ASCEND_OPP_PATH/vendors/config.ini.
# Unlike the template's merge (cp -rf), each directory the package brings replaces the one
# installed (as asc-devkit's install.sh does in quiet mode), so no file of an older version stays.
set -eu
vendor=ascenv
root=""
for arg in "$@"; do
  case "$arg" in
    --install-path=*) root="${arg#--install-path=}" ;;
    --quiet|--install-for-all) ;;
    *) echo "[ops_custom] unknown option: $arg (this package takes --install-path=DIR)" >&2; exit 1 ;;
  esac
done
if [ -n "$root" ]; then
  case "$root" in /*) ;; *) echo "[ops_custom] --install-path must be an absolute path, found $root" >&2; exit 1 ;; esac
  register=no
elif [ -n "${ASCEND_OPP_PATH:-}" ]; then
  root=$ASCEND_OPP_PATH
  register=yes
else
  echo "[ops_custom] ASCEND_OPP_PATH is not set: source CANN's set_env.sh or pass --install-path=DIR" >&2
  exit 1
fi
target="$root/vendors/$vendor"
mkdir -p "$target"
for part in packages/vendors/$vendor/*; do
  name=$(basename "$part")
  rm -rf "${target:?}/$name"
  cp -R "$part" "$target/$name"
done
if [ "$register" = yes ]; then
  config="$root/vendors/config.ini"
  rest=""
  if [ -f "$config" ]; then
    rest=$(head -n 1 "$config" | sed -e 's/^load_priority=//' | tr ',' '\n' | grep -vx "$vendor" | paste -sd, -) || true
  fi
  echo "load_priority=$vendor${rest:+,$rest}" > "$config"
else
  mkdir -p "$target/bin"
  {
    echo "export ASCEND_CUSTOM_OPP_PATH=$target:\${ASCEND_CUSTOM_OPP_PATH:-}"
    echo "export LD_LIBRARY_PATH=$target/op_api/lib/:\${LD_LIBRARY_PATH:-}"
  } > "$target/bin/set_env.bash"
fi
echo "[ops_custom] SUCCESS: $vendor installed in $target"
