# Sourced by scripts that time or profile the release build; needs $ROOT and python3.
#
# release_binary: builds `shipshape` in release mode and prints the executable's path,
# from cargo's JSON messages (the build is for the host named as a target,
# `.cargo/config.toml`, so it is in `target/<host triple>/release`).
release_binary() {
    (cd "$ROOT" && cargo build --release --quiet --message-format=json-render-diagnostics) |
        python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "shipshape" and m.get("executable"):
        print(m["executable"])'
}
