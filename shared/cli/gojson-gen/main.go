// Command gojson-gen prints shared/cli/src/printers/gojson/table.rs: the JSON fields of the
// k8s.io/api types kubectl (of the current release the local cluster runs) encodes run's objects with, in Go's field order, as
// encoding/json sees them (embedded structs inlined, omitempty, pointers, slices, maps
// and the types with a MarshalJSON of their own). See CONTRIBUTING.md, "Generated files".
//
// `cargo xtask codegen` runs it (`go run .` here) and formats its output with rustfmt;
// `cargo xtask codegen --check` fails when table.rs is not that output.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	appsv1beta1 "k8s.io/api/apps/v1beta1"
	batchv1 "k8s.io/api/batch/v1"
	batchv1beta1 "k8s.io/api/batch/v1beta1"
	corev1 "k8s.io/api/core/v1"
	extensionsv1beta1 "k8s.io/api/extensions/v1beta1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

type root struct {
	apiVersion, kind string
	obj              interface{}
}

// The objects run-pod generates (and the servers' answers to them), by the group-version
// kubectl's scheme knows them in.
var roots = []root{
	{"v1", "Pod", corev1.Pod{}},
	{"v1", "Service", corev1.Service{}},
	{"v1", "ReplicationController", corev1.ReplicationController{}},
	{"apps/v1", "Deployment", appsv1.Deployment{}},
	{"apps/v1beta1", "Deployment", appsv1beta1.Deployment{}},
	{"extensions/v1beta1", "Deployment", extensionsv1beta1.Deployment{}},
	{"batch/v1", "Job", batchv1.Job{}},
	{"batch/v1", "CronJob", batchv1.CronJob{}},
	{"batch/v1beta1", "CronJob", batchv1beta1.CronJob{}},
}

// Types that encode themselves, as the leaf the Rust side knows them by.
var leaves = map[reflect.Type]string{
	reflect.TypeOf(metav1.Time{}):          "Time",
	reflect.TypeOf(metav1.MicroTime{}):     "Time",
	reflect.TypeOf(resource.Quantity{}):    "Quantity",
	reflect.TypeOf(intstr.IntOrString{}):   "IntOrString",
	reflect.TypeOf(metav1.FieldsV1{}):      "Raw",
	reflect.TypeOf(runtime.RawExtension{}): "Raw",
	reflect.TypeOf(metav1.Duration{}):      "Str",
}

var marshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

type field struct {
	name      string
	omitempty bool
	omitzero  bool
	ty        string
}

var (
	index   = map[reflect.Type]int{}
	structs [][]field
	names   []string
)

func typeName(t reflect.Type) string {
	p := t.PkgPath()
	p = strings.TrimPrefix(p, "k8s.io/api/")
	p = strings.TrimPrefix(p, "k8s.io/apimachinery/pkg/apis/")
	return p + "." + t.Name()
}

func structIndex(t reflect.Type) int {
	if i, ok := index[t]; ok {
		return i
	}
	i := len(structs)
	index[t] = i
	structs = append(structs, nil)
	names = append(names, typeName(t))
	var fields []field
	collect(t, &fields)
	structs[i] = fields
	return i
}

// collect appends t's JSON fields in encoding/json's order: declaration order, an
// embedded struct without a JSON name expanded where it is declared.
func collect(t reflect.Type, out *[]field) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			collect(f.Type, out)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.Contains(opts, "string") {
			fmt.Fprintf(os.Stderr, "%s.%s: the ,string option is not supported\n", t, f.Name)
			os.Exit(1)
		}
		*out = append(*out, field{name, strings.Contains(opts, "omitempty"), strings.Contains(opts, "omitzero"), typeExpr(f.Type)})
	}
}

func typeExpr(t reflect.Type) string {
	if leaf, ok := leaves[t]; ok {
		return "Ty::" + leaf
	}
	if t.Kind() == reflect.Pointer {
		return "Ty::Ptr(&" + typeExpr(t.Elem()) + ")"
	}
	if t.Implements(marshaler) || reflect.PointerTo(t).Implements(marshaler) {
		fmt.Fprintf(os.Stderr, "%s encodes itself and is not a known leaf\n", t)
		os.Exit(1)
	}
	switch t.Kind() {
	case reflect.String:
		return "Ty::Str"
	case reflect.Bool:
		return "Ty::Bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "Ty::Int"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			fmt.Fprintf(os.Stderr, "%s: []byte (base64) is not supported\n", t)
			os.Exit(1)
		}
		return "Ty::Slice(&" + typeExpr(t.Elem()) + ")"
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			fmt.Fprintf(os.Stderr, "%s: map keys other than strings are not supported\n", t)
			os.Exit(1)
		}
		return "Ty::Map(&" + typeExpr(t.Elem()) + ")"
	case reflect.Struct:
		return fmt.Sprintf("Ty::Struct(%d)", structIndex(t))
	}
	// Floats and []byte (base64) are not in the types above; a new type that has
	// them needs a leaf of its own on the Rust side.
	fmt.Fprintf(os.Stderr, "%s: kind %s is not supported\n", t, t.Kind())
	os.Exit(1)
	return ""
}

func main() {
	type rootIndex struct {
		apiVersion, kind string
		i                int
	}
	var rs []rootIndex
	for _, r := range roots {
		rs = append(rs, rootIndex{r.apiVersion, r.kind, structIndex(reflect.TypeOf(r.obj))})
	}
	sort.Slice(rs, func(a, b int) bool {
		if rs[a].apiVersion != rs[b].apiVersion {
			return rs[a].apiVersion < rs[b].apiVersion
		}
		return rs[a].kind < rs[b].kind
	})
	w := os.Stdout
	fmt.Fprintln(w, "//! Generated by `shared/cli/gojson-gen` (`cargo xtask codegen`) from k8s.io/api "+apiVersion()+" (the current release's kubectl); do not edit.")
	fmt.Fprintln(w, "//! Each struct's JSON fields in Go's order; see the parent module.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "use super::{Field, Ty};")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "/// The kinds whose Go type is known: (apiVersion, kind, index into [`STRUCTS`]).")
	fmt.Fprintln(w, "pub(super) static ROOTS: &[(&str, &str, u16)] = &[")
	for _, r := range rs {
		fmt.Fprintf(w, "    (%q, %q, %d),\n", r.apiVersion, r.kind, r.i)
	}
	fmt.Fprintln(w, "];")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "/// Every struct reachable from [`ROOTS`], by index.")
	fmt.Fprintln(w, "pub(super) static STRUCTS: &[&[Field]] = &[")
	for i, fields := range structs {
		fmt.Fprintf(w, "    // %d: %s\n    &[\n", i, names[i])
		for _, f := range fields {
			constructor := "new"
			if f.omitzero {
				constructor = "omitzero"
			}
			fmt.Fprintf(w, "        Field::%s(%q, %t, %s),\n", constructor, f.name, f.omitempty, f.ty)
		}
		fmt.Fprintln(w, "    ],")
	}
	fmt.Fprintln(w, "];")
}
