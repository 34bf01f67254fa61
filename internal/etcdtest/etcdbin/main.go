// Command etcdbin is etcd itself, built from the pinned go.etcd.io/etcd/server/v3 module so
// the cluster tests run real etcd member processes without downloading a release.
// internal/etcdtest builds it once per etcd and Go version (etcdtest.Binary).
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
