# A scripted editor: moves the object to another namespace, which is not retried.
sed -i "s/namespace: default/namespace: other/" "$1"
