# A scripted editor: the first call renames a field (validation fails), the
# call on the reopened file shows what it got, fixes the field and changes a value.
if grep -q "was not valid" "$1"; then
  echo "--- reopened:" >&2
  cat "$1" >&2
  sed -i "s/^dta:/data:/; s/a: b/a: c/" "$1"
else
  sed -i "s/^data:/dta:/" "$1"
fi
