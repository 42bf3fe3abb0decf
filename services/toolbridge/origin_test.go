package toolbridge

import (
	"net/http"
	"testing"
)

func TestFromThisMachine(t *testing.T) {
	for _, tc := range []struct {
		host   string
		origin []string
		ok     bool
	}{
		{"127.0.0.1:3128", nil, true},
		{"localhost:3128", []string{"http://localhost:3128"}, true},
		{"[::1]:3128", []string{"http://127.0.0.1:3128"}, true},
		{"127.0.0.2", nil, true},
		{"", nil, true},
		{"evil.example.com", []string{"http://evil.example.com"}, false},
		{"evil.example.com", nil, false},
		{"127.0.0.1:3128", []string{"http://evil.example.com"}, false},
		{"127.0.0.1:3128", []string{"null"}, false},
		{"127.0.0.1:3128", []string{"http://127.0.0.1", "http://evil.example.com"}, false},
		{"127.0.0.1:3128", []string{"file:///x"}, false},
		{"10.0.0.1:3128", nil, false},
		{"[fe80::1%lo]:3128", nil, false},
		{"localhost.evil.example.com", nil, false},
	} {
		req := &http.Request{Host: tc.host, Header: http.Header{}}
		for _, o := range tc.origin {
			req.Header.Add("Origin", o)
		}
		if got := fromThisMachine(req); got != tc.ok {
			t.Errorf("Host %q Origin %q: %v, want %v", tc.host, tc.origin, got, tc.ok)
		}
	}
}
