package main

import (
	"fmt"

	"github.com/pinfold/pinfold/launcher"
	"github.com/pinfold/pinfold/policy"
)

const helloHelp = `Usage: launcher hello [--json] [--policy FILE]

Reports what this host can enforce: kernel, Landlock ABI feature by feature,
user, network, pid and mount namespaces, seccomp and libseccomp, cgroup mode
and controllers, and whether the launcher runs as root. Every missing
feature comes with a hint.

With --policy, also says which Boundaries that policy would get here, which
would be refused, and why. The policy is decoded and checked as for a
launch, but no hash is needed: nothing is started.

  --json  machine-readable output

` + exitCodesHelp

type helloReport struct {
	Host        launcher.Host         `json:"host"`
	Policy      string                `json:"policy,omitempty"`
	Boundaries  []launcher.Assessment `json:"boundaries,omitempty"`
	Refused     int                   `json:"refused"`
	SettingNote string                `json:"setting_note"`
}

const settingNote = "if the agent itself starts the launcher, the confinement is a Setting, not a Boundary (SD-01)"

func (e env) hello(args []string) error {
	fset := flags("hello")
	asJSON := fset.Bool("json", false, "")
	file := fset.String("policy", "", "")
	if _, err := e.parse(fset, helloHelp, args, 0); err != nil {
		return err
	}
	var p *policy.Policy
	if *file != "" {
		data, err := readPolicy(*file)
		if err != nil {
			return err
		}
		if p, err = policy.Parse(*file, data); err == nil {
			err = p.CheckLive()
		}
		if err != nil {
			return e.invalid(*file, err)
		}
	}
	rep := helloReport{Host: launcher.Probe(), Policy: *file, SettingNote: settingNote}
	if p != nil {
		rep.Boundaries = launcher.Assess(p, rep.Host)
		for _, a := range rep.Boundaries {
			if a.Verdict == launcher.Refused {
				rep.Refused++
			}
		}
	}
	if *asJSON {
		if err := e.writeJSON(rep); err != nil {
			return err
		}
	} else {
		rep.Host.Text(e.stdout)
		if p != nil {
			fmt.Fprintf(e.stdout, "\npolicy %s on this host:\n", *file)
			launcher.WriteAssessment(e.stdout, rep.Boundaries)
		}
	}
	if rep.Refused > 0 {
		return fail(exitRefused, "see the hints above; `launcher hello` without --policy lists what this host lacks",
			"%d Boundary(ies) that %s needs cannot be enforced on this host: a launch would be refused", rep.Refused, *file)
	}
	return nil
}

// invalid prints every problem of a policy error and returns its exit code.
func (e env) invalid(file string, err error) error {
	pe, ok := err.(*policy.Error)
	if !ok {
		return err
	}
	for _, pr := range pe.Problems {
		e.problem("error", file, pr)
	}
	return silentExit(exitInvalid)
}
