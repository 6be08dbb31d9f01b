# A scripted editor: the first call breaks the YAML; the call on the reopened
# file shows what it got and saves it unchanged, which gives up.
if grep -q "was not valid" "$1"; then
  echo "--- reopened:" >&2
  cat "$1" >&2
else
  sed -i "s/^data:/data: [/" "$1"
fi
