# A scripted editor: one session per object; it changes cm1 and leaves cm2 alone.
echo "--- editing $(grep "^  name:" "$1")" >&2
sed -i "s/a: b/a: c/" "$1"
