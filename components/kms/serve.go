package kms

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/pinfold/pinfold/components/pki"
	"github.com/pinfold/pinfold/components/rpc"
)

// ReleaseRequest asks for the value of secret Name, to be sent to Host
// (lower case, no trailing dot: net normalises once, kms compares).
type ReleaseRequest struct {
	Name string `json:"name"`
	Host string `json:"host"`
}

// ReleaseResult is the value, when released.
type ReleaseResult struct {
	Value []byte `json:"value"`
}

// Register adds kms's one operation, "release", to srv.
func Register(srv *rpc.Server, store *Store) {
	srv.Handle("release", func(_ context.Context, caller pki.Role, body json.RawMessage) (rpc.Decision, any) {
		var req ReleaseRequest
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.Name == "" || req.Host == "" {
			return rpc.Deny(rpc.ReasonBadRequest, "", "release wants {name, host}"), nil
		}
		d, v := store.Release(caller, req.Name, req.Host)
		if !d.Allowed {
			return d, nil
		}
		return d, ReleaseResult{Value: v}
	})
}
