package s3peer

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// KeyID and Secret are the one key pair the peer takes.
const (
	KeyID  = "LNKTESTKEYID0000"
	Secret = "lnk+test/secret-access-key-0123456789"
)

// Peer is a running S3 server.
type Peer struct {
	URL     string // http://127.0.0.1:<port>
	backend *s3mem.Backend

	mu      sync.Mutex
	refused int
}

// Start serves S3 on 127.0.0.1 until the test ends, with bucket made.
func Start(t testing.TB, bucket string) *Peer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := Serve(t, bucket, l, nil)
	p.URL = "http://" + l.Addr().String()
	return p
}

// Serve serves S3 on l (over TLS with cert, when not nil) until the
// test ends, with bucket made. URL is the caller's to set: l's address
// may be one a name of the test's stands for.
func Serve(t testing.TB, bucket string, l net.Listener, cert *tls.Certificate) *Peer {
	t.Helper()
	p := &Peer{backend: s3mem.New()}
	if err := p.backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	fake := gofakes3.New(p.backend, gofakes3.WithIntegrityCheck(true))
	if cert != nil {
		l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12})
	}
	s := &http.Server{Handler: p.signed(fake.Server())}
	go s.Serve(l)
	t.Cleanup(func() { s.Close() })
	return p
}

// Refused is how many requests the peer refused for their signature.
func (p *Peer) Refused() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.refused
}

// signed refuses (403) every request not signed with KeyID and Secret.
func (p *Peer) signed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if code, why := verify(r, KeyID, Secret); code != "" {
			p.mu.Lock()
			p.refused++
			p.mu.Unlock()
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>`+code+`</Code><Message>`+why+`</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Objects is every object of bucket as stored: its key and its bytes.
func (p *Peer) Objects(t testing.TB, bucket string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	list, err := p.backend.ListBucket(bucket, nil, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range list.Contents {
		obj, err := p.backend.GetObject(bucket, o.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(obj.Contents)
		obj.Contents.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[o.Key] = b
	}
	return out
}

// Keys is the sorted keys of Objects.
func (p *Peer) Keys(t testing.TB, bucket string) []string {
	var keys []string
	for k := range p.Objects(t, bucket) {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Holds reports whether any stored object of bucket contains b.
func (p *Peer) Holds(t testing.TB, bucket string, b []byte) bool {
	for k, v := range p.Objects(t, bucket) {
		if bytes.Contains(v, b) || strings.Contains(k, string(b)) {
			return true
		}
	}
	return false
}

// Tamper replaces object key of bucket with data, keeping its metadata,
// as someone holding the store could.
func (p *Peer) Tamper(t testing.TB, bucket, key string, data []byte) {
	t.Helper()
	obj, err := p.backend.HeadObject(bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.backend.PutObject(bucket, key, obj.Metadata, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		t.Fatal(err)
	}
}
