# A scripted editor: shows the file (JSON, no comment header) and changes a value.
cat "$1" >&2
sed -i "s/\"b\"/\"z\"/" "$1"
