package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"math/big"
	"net"
	"slices"
	"testing"
	"time"
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
