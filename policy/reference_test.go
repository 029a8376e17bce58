package policy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// The reference names every key the decoder accepts, each with a type
// and a meaning, and the defaults of Default(); a key it names decodes.
func TestReference(t *testing.T) {
	keys := Reference()
	byName := map[string]Key{}
	for _, k := range keys {
		if k.Type == "" || k.Doc == "" {
			t.Errorf("%s: type %q, doc %q", k.Name, k.Type, k.Doc)
		}
		if _, dup := byName[k.Name]; dup {
			t.Errorf("%s twice", k.Name)
		}
		byName[k.Name] = k
	}
	for name, want := range map[string]string{
		"version": "", "mode": `"wrapper"`, "network.mode": `"none"`, "network.block_all": "true",
		"limits.memory": `"4GiB"`, "limits.processes": "512", "limits.cpu_time": `"0"`, "commands.timeout": `"10m"`,
		"code_mode.deadline": `"10s"`, "files.read": "", "secrets[].template": "", "env.set": "",
	} {
		k, ok := byName[name]
		if !ok {
			t.Errorf("no key %s", name)
			continue
		}
		if k.Default != want {
			t.Errorf("%s default %q, want %q", name, k.Default, want)
		}
	}
	// Every leaf key is one the decoder knows: the Policy struct's toml
	// tags, walked independently here.
	var walk func(t reflect.Type, prefix string) []string
	walk = func(rt reflect.Type, prefix string) (out []string) {
		for i := range rt.NumField() {
			f := rt.Field(i)
			tag, ok := f.Tag.Lookup("toml")
			if !ok {
				continue
			}
			out = append(out, prefix+tag)
			switch {
			case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[CIDR]():
				out = append(out, walk(f.Type, prefix+tag+".")...)
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				out = append(out, walk(f.Type.Elem(), prefix+tag+"[].")...)
			}
		}
		return out
	}
	all := walk(reflect.TypeFor[Policy](), "")
	if len(all) != len(keys) {
		t.Errorf("reference has %d keys, the schema %d", len(keys), len(all))
	}
	for _, n := range all {
		if _, ok := byName[n]; !ok {
			t.Errorf("the reference misses %s", n)
		}
	}
	// The defaults it prints are TOML the decoder reads back.
	for _, k := range keys {
		if k.Default == "" {
			continue
		}
		var v map[string]any
		if _, err := toml.Decode("x = "+k.Default, &v); err != nil || strings.TrimSpace(k.Default) != k.Default {
			t.Errorf("%s: default %q is not a TOML value: %v", k.Name, k.Default, err)
		}
	}
}
