package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
)

// Marshal encodes v as a record body.
func Marshal(v any) ([]byte, error) { return AppendMarshal(nil, v) }

// AppendMarshal appends v's encoding to dst: by v's own [Encoder] when
// it has one that takes the value, else by encoding/json.
func AppendMarshal(dst []byte, v any) ([]byte, error) {
	if e, ok := v.(Encoder); ok {
		if b, ok := e.AppendWire(dst); ok {
			return b, nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		return dst, err
	}
	return append(dst, b...), nil
}

// An Encoder encodes its value as encoding/json would, without
// reflection, for a request or reply on a hot path. ok false (say, for a
// string that needs escaping) leaves it to encoding/json.
type Encoder interface {
	AppendWire(dst []byte) (b []byte, ok bool)
}

// A Decoder decodes a body it recognises (a subset of what [Unmarshal]
// accepts, such as the exact form its [Encoder] writes) into the same
// value [Unmarshal] would, without reflection. ok false means "not
// recognised": [Unmarshal] zeroes the value and decides by its own
// strict rules, so a Decoder can only make decoding faster, never
// looser. A fuzz target beside each Decoder checks that.
type Decoder interface {
	DecodeWire(body []byte) (ok bool)
}

// Unmarshal decodes body into v (a pointer) strictly: an unknown field, a
// field given twice or in another case, a missing field (its json tag has
// no omitempty), a null for anything but a pointer, slice or map, and
// trailing data are all errors. Nested structs are decoded by the same
// rules.
func Unmarshal(body []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("wire: Unmarshal needs a non-nil pointer, got %T", v)
	}
	if d, ok := v.(Decoder); ok {
		if d.DecodeWire(body) {
			return nil
		}
		rv.Elem().SetZero()
	}
	return decodeValue(body, rv.Elem())
}

type fieldInfo struct {
	index    int
	name     string
	required bool
}

type structInfo struct {
	byName   map[string]int // json name → position in fields
	fields   []fieldInfo
	required int
}

var structCache sync.Map // reflect.Type → *structInfo

func infoOf(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = f.Name
		}
		req := !strings.Contains(","+opts+",", ",omitempty,")
		si.byName[name] = len(si.fields)
		si.fields = append(si.fields, fieldInfo{index: i, name: name, required: req})
		if req {
			si.required++
		}
	}
	structCache.Store(t, si)
	return si
}

func isNull(raw []byte) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }

func decodeValue(raw []byte, v reflect.Value) error {
	if isNull(raw) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Interface:
			v.SetZero()
			return nil
		}
		return fmt.Errorf("null for a %s", v.Type())
	}
	switch v.Kind() {
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		if err := decodeValue(raw, p.Elem()); err != nil {
			return err
		}
		v.Set(p)
		return nil
	case reflect.Struct:
		return decodeStruct(raw, v)
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			break // []byte is base64, plain json
		}
		return decodeSlice(raw, v)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(v.Addr().Interface()); err != nil {
		return err
	}
	return expectEOF(dec)
}

func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("trailing data after the value")
	}
	return nil
}

func decodeStruct(raw []byte, v reflect.Value) error {
	si := infoOf(v.Type())
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fmt.Errorf("want an object for %s", v.Type())
	}
	seen := make([]bool, len(si.fields))
	got := 0
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		i, ok := si.byName[key]
		if !ok {
			return fmt.Errorf("unknown field %q in %s", key, v.Type())
		}
		if seen[i] {
			return fmt.Errorf("field %q given twice", key)
		}
		seen[i] = true
		var fv json.RawMessage
		if err := dec.Decode(&fv); err != nil {
			return fmt.Errorf("field %q: %v", key, err)
		}
		if err := decodeValue(fv, v.Field(si.fields[i].index)); err != nil {
			return fmt.Errorf("field %q: %v", key, err)
		}
		if si.fields[i].required {
			got++
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return err
	}
	if got != si.required {
		for i, f := range si.fields {
			if f.required && !seen[i] {
				return fmt.Errorf("missing field %q in %s", f.name, v.Type())
			}
		}
	}
	return expectEOF(dec)
}

func decodeSlice(raw []byte, v reflect.Value) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return fmt.Errorf("want an array for %s", v.Type())
	}
	s := reflect.MakeSlice(v.Type(), 0, 0)
	for dec.More() {
		var ev json.RawMessage
		if err := dec.Decode(&ev); err != nil {
			return err
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := decodeValue(ev, e); err != nil {
			return fmt.Errorf("element %d: %v", s.Len(), err)
		}
		s = reflect.Append(s, e)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return err
	}
	v.Set(s)
	return expectEOF(dec)
}
