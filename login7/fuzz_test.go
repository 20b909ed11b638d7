package login7

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
)

// FuzzDecode: Decode never panics or modifies its input; it rejects whatever Parse rejects,
// with the same error; an accepted message encodes (unless its canonical form is too large,
// possible only when fields overlap), decodes back to an equal Message, and its canonical
// encoding is a fixed point. Its corpus holds tdstest's former FuzzParseLogin7 corpus.
func FuzzDecode(f *testing.F) {
	f.Add(vector74)
	f.Add(vector71)
	f.Add(make([]byte, FixedLen))
	f.Fuzz(func(t *testing.T, msg []byte) {
		orig := bytes.Clone(msg)
		var m Message
		err := m.Decode(msg)
		if !bytes.Equal(msg, orig) {
			t.Fatal("Decode modified its input")
		}
		_, perr := Parse(msg)
		if err != nil {
			var fe *FormatError
			if !errors.Is(err, ErrMalformed) || !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FormatError wrapping ErrMalformed", err, err)
			}
			if perr != nil && perr.Error() != err.Error() {
				t.Fatalf("Parse error %v, Decode error %v", perr, err)
			}
			return
		}
		if perr != nil {
			t.Fatalf("Decode accepts what Parse rejects: %v", perr)
		}
		out, err := m.Encode(nil)
		if err != nil {
			if !errors.Is(err, ErrInvalidMessage) {
				t.Fatalf("Encode of a decoded message: %v", err)
			}
			return
		}
		var back Message
		if err := back.Decode(out); err != nil {
			t.Fatalf("Decode(Encode(m)): %v\n% x", err, out)
		}
		again, err := back.Encode(nil)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("canonical form is not a fixed point: %v\n% x\n% x", err, again, out)
		}
		m.Layout, back.Layout = Layout{}, Layout{}
		if !reflect.DeepEqual(back, m) {
			t.Fatalf("round trip differs:\n got %+v\nwant %+v", back, m)
		}
	})
}

// FuzzParse: Parse never panics; every span it returns, and every Extent, lies inside the
// message and after the fixed part, and an Extent covers its Span.
func FuzzParse(f *testing.F) {
	f.Add(vector74)
	f.Add(vector71)
	f.Fuzz(func(t *testing.T, msg []byte) {
		l, err := Parse(msg)
		if err != nil {
			return
		}
		header, _ := fixedLen(l.TDSVersion)
		inside := func(what string, sp Span) {
			if sp.Len() > 0 && (sp.Start < header || sp.End > len(msg)) || sp.Len() < 0 {
				t.Fatalf("%s %v outside the %d-byte message's variable data", what, sp, len(msg))
			}
		}
		for f := range Field(numFields) {
			sp, ext := l.Span(f), l.Extent(f)
			inside(f.String(), sp)
			inside(f.String()+" extent", ext)
			if ext.Start != sp.Start || ext.End < sp.End {
				t.Fatalf("%v: extent %v does not cover span %v", f, ext, sp)
			}
		}
		inside("FeatureExt", l.FeatureExt)
		for _, fs := range l.Features {
			inside("feature data", fs.Data)
			if fs.At+5 != fs.Data.Start || fs.At < l.FeatureExt.Start || fs.Data.End >= l.FeatureExt.End {
				t.Fatalf("feature %+v outside FeatureExt %v", fs, l.FeatureExt)
			}
		}
	})
}
