package report_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tdsbridge/tdsbridge/internal/report"
)

func TestWriteSVG(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteSVG(&buf, fakeReport()); err != nil {
		t.Fatal(err)
	}
	// Well-formed XML, and one filled bar (a rect with a title) per measured arm: 4 + 2 in the
	// driver panel, 2 + 1 + 1 in the transport panel.
	dec := xml.NewDecoder(bytes.NewReader(buf.Bytes()))
	bars, legend := 0, 0
	var titles []string
	inTitle := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, buf.String())
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "title" {
				bars++
				inTitle = true
			}
			if el.Name.Local == "rect" && attr(el, "width") == "12" {
				legend++
			}
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(el))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
	// 4 + 2 driver value bars, 8 workload bars (own panel), 2 transport, 3 floor.
	if bars != 19 {
		t.Errorf("%d bars, want 19", bars)
	}
	// Legends: four driver arms in each of the first two panels; tls.Conn, bridge and the two
	// floors in the third.
	if legend != 12 {
		t.Errorf("%d legend entries, want 12", legend)
	}
	joined := strings.Join(titles, "\n")
	// narrow rows: bridged TLS 2.6 ms per op over native TLS's 2.5 = 1.04.
	for _, want := range []string{"varbinary/4096, native TLS: 3.10 [3.00-3.20]", "AES <GCM> & co, AES-128-GCM open: 0.19 [0.19-0.19]",
		"narrow rows x100000, bridged TLS: 1.04 [1.04-1.04]", "narrow rows x100000, native TLS: 1.00 [1.00-1.00]"} {
		if !strings.Contains(joined, want) {
			t.Errorf("bar titles lack %q:\n%s", want, joined)
		}
	}
}

func attr(el xml.StartElement, name string) string {
	for _, a := range el.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}
