package netbroker

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/sealedgrant"
	"lnk.dev/lnk/internal/secret"
)

// keySource stands where the keybroker's NetClient plugs in: one sealed
// secret and its host, added in the two headers providers authenticate
// with (Authorization, X-Api-Key).
type keySource struct{ value, host string }

func (k keySource) SealedGrant(_ context.Context, _, name string) (*secret.Value, secrets.Seal, error) {
	if name != "API_KEY" {
		return nil, secrets.Seal{}, fmt.Errorf("no secret %s", name)
	}
	v, err := secret.FromString(k.value)
	return v, secrets.Seal{Host: k.host, Headers: []string{"Authorization", "X-Api-Key"}}, err
}

// The keybroker's client for the netbroker's channel is a SealedSource.
var _ SealedSource = (*sealedgrant.NetClient)(nil)

const realKey = "sk-real-value-0123456789abcdef"

// A sealed secret's route: the placeholder becomes the value on the way
// to its own host over https, in the headers its grant names alone (a
// placeholder in the query or the body goes as it is), and the value
// becomes the placeholder on the way back; the placeholder sent
// anywhere else stays a placeholder.
func TestSealedSecretRoute(t *testing.T) {
	if !inNetns(t) {
		return
	}
	var upstreamSaw atomic.Value
	pool := httpsAt(t, publicAddr+":443", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		upstreamSaw.Store(fmt.Sprintf("%s %s auth=%s body=%s", r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), b))
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "https://evil.test/steal", http.StatusFound)
			return
		}
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		fmt.Fprintf(w, "you sent %s and %s", r.Header.Get("Authorization"), b)
	}))

	var elsewhere atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Store(r.Header.Get("Authorization"))
	}))
	t.Cleanup(other.Close)
	otherPort := portOf(t, other.Listener)

	placeholder := NewPlaceholder("API_KEY")
	var sealed *Sealed
	tp := startProxy(t, Grants{LocalhostPorts: []uint16{otherPort}}, func(c *Config) {
		c.Resolver = mapResolver{"example.com": addrs(publicAddr)}
		sealed = &Sealed{AgentID: "a", RouteSecret: "route-secret", Placeholders: map[string]string{"API_KEY": placeholder},
			Source: keySource{realKey, "example.com"}, RootCAs: pool, Log: c.Log,
			Checker: &Checker{Rules: c.Rules, Resolver: c.Resolver, Own: c.Own}}
		c.Routes = sealed
	})

	body := "token=" + placeholder
	req := fmt.Sprintf("POST /_link/s/route-secret/sealed/API_KEY/v1/echo?k=%s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
		placeholder, placeholder, len(body), body)
	resp, got, _, _ := tp.ask(t, req)
	if resp.StatusCode != 200 {
		t.Fatalf("route: %s %q", resp.Status, got)
	}
	want := fmt.Sprintf("/v1/echo k=%s auth=Bearer %s body=token=%s", placeholder, realKey, placeholder)
	if s, _ := upstreamSaw.Load().(string); s != want {
		t.Fatalf("upstream saw %q, want %q", s, want)
	}
	if seen := fmt.Sprint(resp.Header) + got; strings.Contains(seen, realKey) || !strings.Contains(got, placeholder) {
		t.Fatalf("the sandbox was answered %q %v", got, resp.Header)
	}

	resp, got, _, _ = tp.ask(t, "GET /_link/s/route-secret/sealed/API_KEY/redirect HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	if resp.StatusCode != 302 || resp.Header.Get("Location") != "https://evil.test/steal" {
		t.Fatalf("redirect: %s %v %q", resp.Status, resp.Header, got)
	}

	for path, status := range map[string]int{"/_link/s/wrong/sealed/API_KEY/x": 403, "/_link/s/route-secret/sealed/OTHER/x": 404} {
		if resp, _, _, _ := tp.ask(t, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); resp.StatusCode != status {
			t.Fatalf("%s: %s, want %d", path, resp.Status, status)
		}
	}

	resp, _, _, _ = tp.ask(t, fmt.Sprintf("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n", otherPort, otherPort, placeholder))
	if resp.StatusCode != 200 || elsewhere.Load() != "Bearer "+placeholder {
		t.Fatalf("another host got %v (%s)", elsewhere.Load(), resp.Status)
	}
	for _, e := range tp.log.all() {
		if strings.Contains(fmt.Sprintf("%+v", e), realKey) || strings.Contains(fmt.Sprintf("%+v", e), "route-secret") {
			t.Fatalf("the log holds a secret: %+v", e)
		}
	}
}

// The scrubber replaces the value however the stream is cut.
func TestScrubAcrossWrites(t *testing.T) {
	in := "a" + realKey + "b" + realKey[:5] + "c" + realKey
	for cut := 1; cut < len(in); cut++ {
		var out bytes.Buffer
		s := &scrubWriter{w: &out, old: []byte(realKey), new: []byte("PH")}
		s.Write([]byte(in[:cut]))
		s.Write([]byte(in[cut:]))
		s.flush()
		if want := "aPHb" + realKey[:5] + "cPH"; out.String() != want {
			t.Fatalf("cut at %d: %q, want %q", cut, out.String(), want)
		}
	}
}

// grantSource hands API_KEY with the headers it was made with.
type grantSource struct{ headers []string }

func (g grantSource) SealedGrant(_ context.Context, _, _ string) (*secret.Value, secrets.Seal, error) {
	v, err := secret.FromString(realKey)
	return v, secrets.Seal{Host: "example.com", Headers: g.headers}, err
}

// A grant naming no header, or one no host authenticates with, is
// refused where the value would be added (502), never read as
// "anywhere"; nothing is dialed.
func TestSealedGrantWithoutHeadersRefused(t *testing.T) {
	for _, headers := range [][]string{nil, {}, {"Host"}, {"X-K\r\nY"}} {
		placeholder := NewPlaceholder("API_KEY")
		tp := startProxy(t, Grants{}, func(c *Config) {
			c.Routes = &Sealed{AgentID: "a", RouteSecret: "route-secret", Placeholders: map[string]string{"API_KEY": placeholder},
				Source: grantSource{headers}, Log: c.Log, Checker: &Checker{Rules: c.Rules, Resolver: c.Resolver, Own: c.Own}}
		})
		resp, body, _, _ := tp.ask(t, "GET /_link/s/route-secret/sealed/API_KEY/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer "+placeholder+"\r\n\r\n")
		if resp.StatusCode != 502 || !strings.Contains(body, "names no header it may go in") {
			t.Errorf("headers %q: %s %q", headers, resp.Status, body)
		}
	}
}
