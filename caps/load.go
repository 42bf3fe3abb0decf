package caps

// CompileAgent loads agent name's grants under home (its
// Config/sandbox.toml, and its harness's ~/.lnk/harnesses/<h>.toml when
// agent.toml names one), joins them and compiles them: what
// `lnk sandbox run --agent NAME` is built from. A missing sandbox.toml
// grants nothing beyond Link's defaults.
func CompileAgent(home, name string) (*Compiled, error) {
	in, err := agentInput(home, name)
	if err != nil {
		return nil, err
	}
	return Compile(in)
}

// agentInput reads agent name's layers.
func agentInput(home, name string) (Input, error) {
	l, a, err := agentIn(home, name)
	if err != nil {
		return Input{}, err
	}
	in := Input{Home: l.Home, Agent: a}
	own, err := ownSpec(l, name)
	if err != nil {
		return Input{}, err
	}
	in.Own = &Layer{Whose: "agent", File: l.SandboxFile(name), Spec: own}
	if a.Harness != "" {
		if err := CheckName(a.Harness); err != nil {
			return Input{}, err
		}
		hs, err := readSpecIfAny(l.HarnessFile(a.Harness))
		if err != nil {
			return Input{}, err
		}
		in.Harness = &Layer{Whose: "harness " + a.Harness, File: l.HarnessFile(a.Harness), Spec: hs}
	}
	return in, nil
}

// CompileFile compiles a sandbox from one spec file, with no agent:
// `lnk sandbox run --sandbox-file F`. Relative [files] paths are taken
// against base (the caller's working folder); "" refuses them. The file
// is refused if it is a link, lies behind one, or isn't regular.
func CompileFile(home, base, path string) (*Compiled, error) {
	s, err := ReadSpecFile(path)
	if err != nil {
		return nil, err
	}
	return Compile(Input{Home: home, Base: base, Own: &Layer{Whose: "agent", File: path, Spec: s}})
}

// CompileFlags compiles a sandbox from command-line grants alone, with
// no agent: `lnk sandbox run --read X --write Y …`. Relative paths are
// taken against base. Each --write folder is scanned for nested
// repositories (ScanNested), kept read-only as lnk agent allow keeps
// them; --write-git's are not.
func CompileFlags(home, base string, g Grants) (*Compiled, error) {
	s := &Spec{}
	if err := g.AddTo(s); err != nil {
		return nil, err
	}
	in := Input{Home: home, Base: base, Own: &Layer{Whose: "agent", File: "(flags)", Spec: s}}
	if len(g.Write) == 0 {
		return Compile(in)
	}
	if _, err := Compile(in); err != nil {
		return nil, err
	}
	if err := rescanNested(home, base, s, g); err != nil {
		return nil, err
	}
	return Compile(in)
}

// CompileSpec compiles one spec already parsed, with no agent.
func CompileSpec(home, base string, s *Spec) (*Compiled, error) {
	return Compile(Input{Home: home, Base: base, Own: &Layer{Whose: "agent", Spec: s}})
}
