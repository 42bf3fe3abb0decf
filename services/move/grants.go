package move

import (
	"strings"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/services/bucket"
)

// narrowGrants takes the stream's sandbox.toml for an agent new here,
// less what opens the machine itself or reaches past its sandbox, which
// only this machine's owner gives: --read '~', --network-mode host,
// --lan-host, --port, --browser-host, --tcp, --tool, a --command named by
// a path or *, and teams' folders. It returns the spec to write and, for
// each grant left out, the lnk agent allow flag that would give it
// ("team:NAME" for a team's folder, which only a team file gives).
func narrowGrants(data []byte) ([]byte, []string, error) {
	s, err := caps.ParseSpec("the stream's sandbox.toml", data)
	if err != nil {
		return nil, nil, err
	}
	var allow []string
	add := func(flag, v string) { allow = append(allow, flag+" "+shellQuote(v)) }
	if s.Files != nil {
		var keep []string
		for _, p := range s.Files.Read {
			if p == "~" || p == "~/" {
				add("--read", p)
				continue
			}
			keep = append(keep, p)
		}
		s.Files.Read = keep
	}
	if s.Network != nil && s.Network.Mode != "" {
		add("--network-mode", s.Network.Mode)
		s.Network = nil
	}
	if s.LAN != nil {
		for _, h := range s.LAN.Hosts {
			add("--lan-host", h)
		}
		s.LAN = nil
	}
	if s.Localhost != nil {
		for _, p := range s.Localhost.Ports {
			add("--port", string(p))
		}
		s.Localhost = nil
	}
	if s.Browser != nil {
		for _, h := range s.Browser.Hosts {
			add("--browser-host", h)
		}
		s.Browser = nil
	}
	if s.Internet != nil {
		for _, t := range s.Internet.TCP {
			add("--tcp", t)
		}
		s.Internet.TCP = nil
	}
	if s.Tools != nil {
		for name := range s.Tools.Grant {
			add("--tool", name)
		}
		s.Tools.Grant = nil
	}
	if s.Commands != nil {
		var keep []string
		for _, c := range s.Commands.Allow {
			if c == "*" || strings.Contains(c, "/") {
				add("--command", c)
				continue
			}
			keep = append(keep, c)
		}
		s.Commands.Allow = keep
	}
	for team := range s.Teams {
		allow = append(allow, "team:"+team)
	}
	s.Teams = nil
	out, err := caps.EncodeSpec(s)
	if err != nil {
		return nil, nil, err
	}
	return out, allow, nil
}

// droppedBucket says why bucket d of agent name was left out, and the
// lnk agent bucket add that would give it again (its keys, which came
// with it, are not kept).
func droppedBucket(name string, d bucket.Dropped) string {
	cmd := "lnk agent bucket add " + name + " " + d.Name + " --s3 " + shellQuote(d.Endpoint) + " --bucket " + shellQuote(d.S3Bucket)
	if d.Region != "" {
		cmd += " --region " + shellQuote(d.Region)
	}
	if d.Encrypted {
		cmd += " --encrypt --ask-password"
	}
	return "bucket " + d.Name + ": " + d.Why + "; " + cmd + " gives it again"
}

// shellQuote quotes v for a command line shown to the owner, without
// control characters.
func shellQuote(v string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range v {
		switch {
		case r < 0x20 || r == 0x7f:
			b.WriteByte('?')
		case r == '\'':
			b.WriteString(`'\''`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}
