package policy

import (
	"encoding/json"
	"net/netip"
	"testing"
)

// The [network] table travels to the net component as JSON: a range
// survives the trip in canonical form, and a non-canonical one is refused
// on the way in as it is in the policy text.
func TestCIDRJSON(t *testing.T) {
	n := Network{Mode: NetProxy, UnsafeAllowPrivate: []CIDR{CIDR(netip.MustParsePrefix("10.0.0.0/8")), CIDR(netip.MustParsePrefix("fd00::/8"))}}
	b, err := json.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	var back Network
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	if len(back.UnsafeAllowPrivate) != 2 || back.UnsafeAllowPrivate[0].String() != "10.0.0.0/8" || back.UnsafeAllowPrivate[1].String() != "fd00::/8" {
		t.Errorf("round trip: %s → %+v", b, back.UnsafeAllowPrivate)
	}
	for _, bad := range []string{`"10.1.0.0/8"`, `"::ffff:10.0.0.0/104"`, `"10.0.0.0"`} {
		var c CIDR
		if err := json.Unmarshal([]byte(bad), &c); err == nil {
			t.Errorf("%s accepted as %v", bad, c)
		}
	}
}
