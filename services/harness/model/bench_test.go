package model

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"
)

// benchStream is a recorded stream made long: its events holding mark
// (its text's pieces) repeated n times where they are, as a long answer
// streams.
func benchStream(b *testing.B, file, mark string, n int) []byte {
	body := loadRecorded(b, file).Body
	events := bytes.SplitAfter(body, []byte("\n\n"))
	var out bytes.Buffer
	for _, ev := range events {
		times := 1
		if bytes.Contains(ev, []byte(mark)) {
			times = n
		}
		for i := 0; i < times; i++ {
			out.Write(ev)
		}
	}
	return out.Bytes()
}

// chunksOf is each event's data, the baseline's input.
func chunksOf(stream []byte) [][]byte {
	var out [][]byte
	for _, ev := range bytes.Split(stream, []byte("\n\n")) {
		for _, line := range bytes.Split(ev, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && !bytes.Equal(d, []byte("[DONE]")) {
				out = append(out, d)
			}
		}
	}
	return out
}

// BenchmarkParseStream reads a long recorded stream of each format
// whole (the SSE reader, the event parser, the answer put together and
// checked) beside encoding/json decoding the same chunks' data into the
// same structs, in the same run: MB/s is the stream's, x-baseline the
// ratio of the two.
func BenchmarkParseStream(b *testing.B) {
	for _, c := range []struct {
		name, file, mark string
		parse            func([]byte) error
		decode           func([]byte) error
	}{
		{"openai", "openai/stream_text.http", `"delta":{"content":"`,
			func(s []byte) error {
				_, err := readOpenAIStream(bytes.NewReader(s), cleaner{}, nil)
				return err
			},
			func(d []byte) error { var ch oaChunk; return json.Unmarshal(d, &ch) }},
		{"anthropic", "anthropic/stream_text.http", `"text_delta"`,
			func(s []byte) error {
				_, err := readAnthropicStream(bytes.NewReader(s), cleaner{}, nil)
				return err
			},
			func(d []byte) error {
				var ev anEvent
				if err := json.Unmarshal(d, &ev); err != nil {
					return err
				}
				if len(ev.Delta) > 0 {
					var dl anDelta
					return json.Unmarshal(ev.Delta, &dl)
				}
				return nil
			}},
	} {
		b.Run(c.name, func(b *testing.B) {
			stream := benchStream(b, c.file, c.mark, 500)
			chunks := chunksOf(stream)
			if err := c.parse(stream); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if err := c.parse(stream); err != nil {
					b.Fatal(err)
				}
			}
			link := time.Since(start)
			b.StopTimer()
			start = time.Now()
			for i := 0; i < b.N; i++ {
				for _, d := range chunks {
					if err := c.decode(d); err != nil {
						b.Fatal(err)
					}
				}
			}
			base := time.Since(start)
			linkNs := float64(link.Nanoseconds()) / float64(b.N)
			baseNs := float64(base.Nanoseconds()) / float64(b.N)
			b.ReportMetric(linkNs, "link-ns/op")
			b.ReportMetric(baseNs, "base-ns/op")
			b.ReportMetric(linkNs/baseNs, "x-baseline")
			b.ReportMetric(float64(len(stream))/baseNs*1e3, "base-MB/s")
		})
	}
}
