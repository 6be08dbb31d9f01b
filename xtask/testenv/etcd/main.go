// Command etcd is etcd's server, started as upstream's own `etcd` binary starts it
// (etcdmain.Main), built from the go.etcd.io/etcd/server/v3 module at the version the
// pinned Kubernetes release names in its go.mod: the server module is all the local
// cluster runs, so only its dependencies are pinned here.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
