package sandbox

import (
	"reflect"
	"testing"
)

// A started proxy tells its sandbox ALL_PROXY as SOCKS5 with its secret,
// and each sealed secret's placeholder and route; a sealed secret named
// like one of the sandbox's own variables is not set, and said.
func TestProxyEnvSOCKSAndSealed(t *testing.T) {
	env := Env("/home/u", 3128)
	p := &Proxy{Secret: "s3cr3t", Placeholders: map[string]string{"API_KEY": "lnk-sealed-api_key-01", "PATH": "lnk-sealed-path-02"}}
	skipped := addProxyEnv(env, 3128, p)
	want := map[string]string{
		"ALL_PROXY":              "socks5h://lnk:s3cr3t@127.0.0.1:3128",
		"all_proxy":              "socks5h://lnk:s3cr3t@127.0.0.1:3128",
		"HTTP_PROXY":             "http://127.0.0.1:3128",
		"https_proxy":            "http://127.0.0.1:3128",
		"API_KEY":                "lnk-sealed-api_key-01",
		"LNK_SEALED_API_KEY_URL": "http://127.0.0.1:3128/_link/s/s3cr3t/sealed/API_KEY/",
		"PATH":                   Path,
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	if _, ok := env["LNK_SEALED_PATH_URL"]; ok || !reflect.DeepEqual(skipped, []string{"PATH"}) {
		t.Errorf("a sealed PATH: skipped %v, env %v", skipped, env)
	}
	for _, c := range []struct {
		relay uint16
		p     *Proxy
	}{{0, p}, {3128, nil}, {3128, &Proxy{}}} {
		env := Env("/home/u", c.relay)
		before := len(env)
		addProxyEnv(env, c.relay, c.p)
		if len(env) != before || env["API_KEY"] != "" {
			t.Errorf("relay %d proxy %+v: %v", c.relay, c.p, env)
		}
	}
}
