package framework

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kschedv1 "k8s.io/kube-scheduler/config/v1"
	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"
)

// This file decodes, defaults (upstream's pkg/scheduler/apis/config/v1
// defaults.go) and validates (validation_pluginargs.go) the pluginConfig
// args of the plugins wasmsched implements, into the plugins' fields.

// decodeArgs decodes, defaults and validates configs through the rows'
// Args, each plugin with args but without a config getting upstream's
// defaults, by plugin name.
func (r *Registry) decodeArgs(configs []kschedv1.PluginConfig) (map[string]any, error) {
	out := map[string]any{}
	for i := range configs {
		pc := &configs[i]
		entry := field.NewPath("pluginConfig").Index(i)
		if _, dup := out[pc.Name]; dup {
			return nil, field.Duplicate(entry, pc.Name)
		}
		row, ok := r.Row(pc.Name)
		switch {
		case !ok || row.NotImplemented != "":
			return nil, field.Invalid(entry.Child("name"), pc.Name,
				"args for a plugin wasmsched does not know: it runs upstream v1.37.1's in-tree plugins and those its binary was built with")
		case row.Args == nil:
			return nil, field.Invalid(entry.Child("name"), pc.Name, "this plugin takes no args: remove its pluginConfig entry")
		}
		a, err := row.Args(pc, entry.Child("args"))
		if err != nil {
			return nil, err
		}
		out[pc.Name] = a
	}
	for _, row := range r.rows {
		if _, ok := out[row.Name]; ok || row.Args == nil || row.NotImplemented != "" {
			continue
		}
		a, err := row.Args(nil, field.NewPath("pluginConfig").Key(row.Name).Child("args"))
		if err != nil {
			return nil, fmt.Errorf("plugin %s: default args: %w", row.Name, err)
		}
		out[row.Name] = a
	}
	return out, nil
}

// DecodeArgs decodes pc's args into into (a pointer to the zero value of
// the plugin's args type), for a Row.Args: an object already decoded as
// that type is copied; raw JSON (or YAML) is decoded strictly, so that an
// unknown or duplicate field is an error naming it. No args, or a nil pc,
// leave into as it is.
func DecodeArgs(pc *kschedv1.PluginConfig, path *field.Path, into runtime.Object) error {
	if pc == nil {
		return nil
	}
	raw := pc.Args.Raw
	switch obj := pc.Args.Object.(type) {
	case nil:
	case *runtime.Unknown:
		raw = obj.Raw
	default:
		if reflect.TypeOf(obj) != reflect.TypeOf(into) {
			return field.Invalid(path, fmt.Sprintf("%T", obj), fmt.Sprintf("has to be %sArgs", pc.Name))
		}
		reflect.ValueOf(into).Elem().Set(reflect.ValueOf(obj.DeepCopyObject()).Elem())
		raw = nil
	}
	if trimmed := bytes.TrimSpace(raw); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if !json.Valid(trimmed) {
			j, err := yaml.YAMLToJSON(trimmed)
			if err != nil {
				return field.Invalid(path, string(raw), fmt.Sprintf("not JSON or YAML: %v", err))
			}
			trimmed = j
		}
		strict, err := sigsjson.UnmarshalStrict(trimmed, into)
		if err != nil {
			return field.Invalid(path, string(trimmed), fmt.Sprintf("decode as %sArgs: %v", pc.Name, err))
		}
		if len(strict) > 0 {
			return field.Invalid(path, string(trimmed), fmt.Sprintf("decode as %sArgs: %v", pc.Name, utilerrors.NewAggregate(strict)))
		}
	}
	gvk := into.GetObjectKind().GroupVersionKind()
	if gvk.Kind != "" && gvk.Kind != pc.Name+"Args" {
		return field.Invalid(path.Child("kind"), gvk.Kind, fmt.Sprintf("has to be %sArgs", pc.Name))
	}
	if v := gvk.GroupVersion().String(); v != "" && v != "/" && v != kschedv1.SchemeGroupVersion.String() {
		return field.Invalid(path.Child("apiVersion"), v, fmt.Sprintf("has to be %s", kschedv1.SchemeGroupVersion))
	}
	return nil
}
