//go:build tools

// Package controlplane pins the Kubernetes release kubeplug's local cluster runs, its
// control plane and its node (kubelet, kube-proxy). It is never built itself:
// `cargo xtask testenv` builds the release's own commands
// (k8s.io/kubernetes/cmd/...) with this module as the main module, so go.mod and
// go.sum fix every dependency and its checksum. The imports below keep `go mod tidy`
// from dropping the requirements those commands need.
package controlplane

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
	_ "k8s.io/kubernetes/cmd/kubelet/app"
	_ "k8s.io/kubernetes/cmd/kube-proxy/app"
	_ "k8s.io/kubectl/pkg/cmd"
)
