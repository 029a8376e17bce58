package policy

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// Key is one policy key as the reference documents it: its dotted name
// (arrays of tables as "secrets[].name"), its TOML type, its default
// (TOML text, "" when it has none) and its meaning, from the schema's
// doc tags.
type Key struct {
	Name    string
	Type    string
	Default string
	Doc     string
}

// Reference is every key of the schema, in the order of the structs,
// tables before their keys. It is generated from the same struct tags the
// decoder accepts, so it cannot name a key the launcher refuses or miss
// one it reads.
func Reference() []Key {
	var keys []Key
	walkKeys(reflect.TypeFor[Policy](), reflect.ValueOf(Default()), "", &keys)
	return keys
}

func walkKeys(t reflect.Type, def reflect.Value, prefix string, keys *[]Key) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, ok := f.Tag.Lookup("toml")
		if !ok || !f.IsExported() {
			continue
		}
		full := prefix + name
		doc := f.Tag.Get("doc")
		switch {
		case f.Type.Kind() == reflect.Struct && f.Type.PkgPath() == t.PkgPath() && !isValue(f.Type):
			*keys = append(*keys, Key{Name: full, Type: "table", Doc: orTypeDoc(doc, f.Type)})
			walkKeys(f.Type, def.Field(i), full+".", keys)
		case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
			*keys = append(*keys, Key{Name: full, Type: "array of tables", Doc: doc})
			walkKeys(f.Type.Elem(), reflect.New(f.Type.Elem()).Elem(), full+"[].", keys)
		default:
			*keys = append(*keys, Key{Name: full, Type: typeName(f.Type), Default: defaultText(def.Field(i)), Doc: doc})
		}
	}
}

// isValue reports the struct types that are one TOML value (none today;
// CIDR is a netip.Prefix, defined here but not a table).
func isValue(t reflect.Type) bool { return t == reflect.TypeFor[CIDR]() }

// orTypeDoc is a table's doc: its field's tag, else its type's summary.
func orTypeDoc(doc string, t reflect.Type) string {
	if doc != "" {
		return doc
	}
	return tableDocs[t.Name()]
}

// tableDocs describe the tables whose field carries no doc tag.
var tableDocs = map[string]string{
	"Workspace": "The agent's working directory.",
	"Files":     "The file-system access the agent gets. Each listed directory is granted whole, including files created in it later (SD-08).",
	"Network":   "How the agent reaches the network.",
	"Limits":    "Bounds on the agent's resources. \"0\" means unlimited where allowed.",
	"Env":       "The agent's environment. Nothing is inherited unless passed.",
}

// typeNames describe the schema's value types as a person writes them.
var typeNames = map[reflect.Type]string{
	reflect.TypeFor[Int]():        "integer",
	reflect.TypeFor[Port]():       "integer (port, 1–65535)",
	reflect.TypeFor[Text]():       "string",
	reflect.TypeFor[Path]():       "string (absolute path)",
	reflect.TypeFor[Size]():       `string (size: "512MiB", "4GiB", "0")`,
	reflect.TypeFor[Duration]():   `string (duration: "500ms", "10s", "2h", "0")`,
	reflect.TypeFor[Mode]():       `string: "wrapper" or "components"`,
	reflect.TypeFor[NetMode]():    `string: "none", "ports" or "proxy"`,
	reflect.TypeFor[Domain]():     `string (host name, exact or "*.suffix")`,
	reflect.TypeFor[CIDR]():       `string (CIDR: "10.0.0.0/8")`,
	reflect.TypeFor[EnvName]():    "string (environment variable name)",
	reflect.TypeFor[SecretName](): "string (secret name in the vault)",
	reflect.TypeFor[HeaderName](): "string (HTTP header name)",
	reflect.TypeFor[Template]():   `string (header value with "{secret}" once)`,
	reflect.TypeFor[Command]():    `string (command prefix, e.g. "git status")`,
	reflect.TypeFor[EnvSet]():     "table of strings (name = value)",
	reflect.TypeFor[bool]():       "boolean",
}

func typeName(t reflect.Type) string {
	if n, ok := typeNames[t]; ok {
		return n
	}
	if t.Kind() == reflect.Slice {
		return "array of " + typeName(t.Elem())
	}
	return bug("policy reference: no name for type " + t.String())
}

// defaultText is v as TOML text, "" for an empty value (no default).
// A zero size or duration is written: "0" is the value (unlimited).
func defaultText(v reflect.Value) string {
	switch x := v.Interface().(type) {
	case Size, Duration:
		return strconv.Quote(fmt.Sprint(x))
	case Mode, NetMode:
		if v.IsZero() {
			return ""
		}
		return strconv.Quote(fmt.Sprint(x))
	case Int:
		if x == 0 {
			return ""
		}
		return strconv.FormatInt(int64(x), 10)
	case bool:
		return strconv.FormatBool(x)
	}
	if v.IsZero() || (v.Kind() == reflect.Slice && v.Len() == 0) {
		return ""
	}
	return strings.TrimSpace(fmt.Sprint(v.Interface()))
}
