package service

import (
	"strings"
	"testing"
)

func TestParseHello(t *testing.T) {
	if id, err := ParseHello([]byte(Hello + "7f3a-9c\n")); err != nil || id != "7f3a-9c" {
		t.Errorf("a good line: %q %v", id, err)
	}
	for _, bad := range []string{"", "\n", Hello + "\n", Hello + "ada", Hello + "ada\r\n", Hello + "-ada\n", Hello + "ADA\n",
		Hello + "a/b\n", Hello + "a b\n", Hello + "ada\nmore", " " + Hello + "ada\n", Hello + strings.Repeat("a", 65) + "\n"} {
		if id, err := ParseHello([]byte(bad)); err == nil {
			t.Errorf("%q parsed as %q", bad, id)
		}
	}
}

func FuzzParseHello(f *testing.F) {
	f.Add([]byte(Hello + "ada\n"))
	f.Add([]byte(Hello + "ada\r\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, err := ParseHello(line)
		if err != nil {
			return
		}
		if string(line) != Hello+id+"\n" || CheckID(id) != nil {
			t.Fatalf("%q parsed as %q", line, id)
		}
	})
}

func FuzzParseNeed(f *testing.F) {
	f.Add([]byte(NeedPrefix + "ada\n"))
	f.Add([]byte(NeedPrefix + "ada\nmore"))
	f.Fuzz(func(t *testing.T, line []byte) {
		id, err := ParseNeed(line)
		if err != nil {
			return
		}
		if string(line) != NeedPrefix+id+"\n" || CheckID(id) != nil {
			t.Fatalf("%q parsed as %q", line, id)
		}
	})
}
