# A scripted editor: the first call misspells the kind (no mapping: a "syntax
# error" for kubectl); the call on the reopened file shows it and fixes the kind.
if grep -q "syntax error" "$1"; then
  echo "--- reopened:" >&2
  cat "$1" >&2
  sed -i "s/^kind: ConfigMapp/kind: ConfigMap/; s/name: cm1/name: cm2/" "$1"
else
  sed -i "s/^kind: ConfigMap/kind: ConfigMapp/" "$1"
fi
