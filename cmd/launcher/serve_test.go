package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pinfold/pinfold/gateway"
	"github.com/pinfold/pinfold/policy"
)

// A --tls-cert's names and addresses are names the gateway is served as
// (its Host check takes them); a wildcard names no one host.
func TestCertNames(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now(), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"gw.example.org", "*.example.org"}, IPAddresses: []net.IP{net.ParseIP("192.0.2.10")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	got := certNames(tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key})
	if want := []string{"gw.example.org", "192.0.2.10"}; !slices.Equal(got, want) {
		t.Errorf("certNames = %q, want %q", got, want)
	}
}

// Where the policy reaches the token store, the gateway hands its
// sessions the store's directory to cover whole (a rename inside it does
// not undo the cover): the directory must hold only the store, its lock
// and the launcher's other own files (the default vault beside it), and
// is made when missing; one holding anything else is refused, naming it.
// A store the policy does not reach needs nothing.
func TestServeStoreCover(t *testing.T) {
	base := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(base, "config"))
	p := &policy.Policy{}
	p.Workspace.Path = policy.Path(filepath.Join(base, "ws"))
	p.Files.Read = []policy.Path{policy.Path(filepath.Join(base, "home"))}
	write := func(f string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(f), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cover := func(store string) (string, error) {
		return storeCover(p, store, pathForms(store, store+".lock"))
	}
	if d, err := cover(filepath.Join(base, "elsewhere", "tokens.json")); d != "" || err != nil {
		t.Errorf("a store the policy does not reach: %q, %v", d, err)
	}
	if _, err := os.Lstat(filepath.Join(base, "elsewhere")); err == nil {
		t.Errorf("a directory made for a store the policy does not reach")
	}
	own := filepath.Join(base, "home", "gw", "tokens.json")
	write(own)
	write(own + ".lock")
	if d, err := cover(own); d != filepath.Dir(own) || err != nil {
		t.Errorf("a store in a directory of its own: %q, %v", d, err)
	}
	fresh := filepath.Join(base, "home", "new", "tokens.json")
	if d, err := cover(fresh); d != filepath.Dir(fresh) || err != nil {
		t.Errorf("a store not made yet: %q, %v", d, err)
	}
	if st, err := os.Stat(filepath.Dir(fresh)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("the new store's directory: %v, %v", st, err)
	}
	// The default place, beside the default vault.
	def, err := gateway.DefaultStorePath()
	if err != nil {
		t.Fatal(err)
	}
	write(def)
	write(filepath.Join(filepath.Dir(def), "vault"))
	p.Files.Read = append(p.Files.Read, policy.Path(filepath.Join(base, "config")))
	if d, err := cover(def); d != filepath.Dir(def) || err != nil {
		t.Errorf("the default store beside the default vault: %q, %v", d, err)
	}
	shared := filepath.Join(base, "home", "tokens.json")
	write(shared)
	_, err = cover(shared)
	var ce *cliError
	if !errors.As(err, &ce) || ce.code != exitRefused || !strings.Contains(err.Error(), "the policy's "+filepath.Join(base, "home")+" reaches the gateway's token store "+shared) || !strings.Contains(err.Error(), "holds other files") {
		t.Errorf("a store beside other files: %v", err)
	}
}
