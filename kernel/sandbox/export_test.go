package sandbox

// ProxyPid is p's lnk-netbroker's pid, for tests that stop it.
func ProxyPid(p *Proxy) int { return p.cmd.Process.Pid }
