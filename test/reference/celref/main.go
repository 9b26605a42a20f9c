// celref evaluates DRA device selectors with upstream's CEL environment
// (k8s.io/dynamic-resource-allocation/cel v0.34.1) and prints one JSON
// result per input line; test/unit/test_cel.c's expectations come from it.
//
// Input, one JSON object per line:
//
//	{"expr": "...", "driver": "d", "attrs": {"name": {"int": 1}}, "caps": {"name": "1Gi"}}
//
// Output, one JSON object per line:
//
//	{"compile_error": "..."} or {"match": true} or {"error": "..."}
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/dynamic-resource-allocation/cel"
)

type attr struct {
	Int     *int64  `json:"int"`
	Bool    *bool   `json:"bool"`
	String  *string `json:"string"`
	Version *string `json:"version"`
}

type input struct {
	Expr   string            `json:"expr"`
	Driver string            `json:"driver"`
	Attrs  map[string]attr   `json:"attrs"`
	Caps   map[string]string `json:"caps"`
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	comp := cel.GetCompiler(cel.Features{})
	for in.Scan() {
		var c input
		if err := json.Unmarshal(in.Bytes(), &c); err != nil {
			fmt.Fprintln(os.Stderr, "celref:", err)
			os.Exit(1)
		}
		res := map[string]any{}
		r := comp.CompileCELExpression(c.Expr, cel.Options{})
		if r.Error != nil {
			res["compile_error"] = r.Error.Error()
			out.Encode(res)
			continue
		}
		d := cel.Device{Driver: c.Driver, Attributes: map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{},
			Capacity: map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}}
		for k, a := range c.Attrs {
			d.Attributes[resourceapi.QualifiedName(k)] = resourceapi.DeviceAttribute{IntValue: a.Int, BoolValue: a.Bool, StringValue: a.String, VersionValue: a.Version}
		}
		for k, q := range c.Caps {
			d.Capacity[resourceapi.QualifiedName(k)] = resourceapi.DeviceCapacity{Value: resource.MustParse(q)}
		}
		m, details, err := r.DeviceMatches(context.Background(), d)
		if err != nil {
			res["error"] = err.Error()
		} else {
			res["match"] = m
		}
		if details != nil && details.ActualCost() != nil {
			res["cost"] = *details.ActualCost()
		}
		out.Encode(res)
	}
}
