package main

import "runtime/debug"

// apiVersion is the k8s.io/api module version this program was built with.
func apiVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, m := range info.Deps {
			if m.Path == "k8s.io/api" {
				return m.Version
			}
		}
	}
	return "(unknown version)"
}
