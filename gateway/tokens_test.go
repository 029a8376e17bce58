package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var tokNow = time.Date(2026, 3, 1, 12, 30, 0, 0, time.FixedZone("CET", 3600))

func tokStore(t *testing.T) Store {
	t.Helper()
	return Store{Path: filepath.Join(t.TempDir(), "cfg", "pinfold", "serve-tokens.json")}
}

func tokAdd(t *testing.T, s Store, name string, caps ...string) string {
	t.Helper()
	secret, err := s.Add(name, caps, tokNow)
	if err != nil {
		t.Fatalf("add %q: %v", name, err)
	}
	return secret
}

var tokSecretRE = regexp.MustCompile(`^pft_[A-Za-z0-9_-]{43}$`)

// Add, List, Verify and Revoke, end to end; the file keeps hashes only.
func TestStoreRoundTrip(t *testing.T) {
	s := tokStore(t)
	if toks, err := s.List(); err != nil || toks == nil || len(toks) != 0 {
		t.Fatalf("missing store: List = %#v, %v; want empty, nil", toks, err)
	}
	ci := tokAdd(t, s, "ci", CapHostExecute, CapHostExecute) // a repeated cap is one
	laptop := tokAdd(t, s, "laptop")
	for _, sec := range []string{ci, laptop} {
		if !tokSecretRE.MatchString(sec) {
			t.Fatalf("secret %q is not pft_ and 43 base64url characters", sec)
		}
	}
	if ci == laptop {
		t.Fatal("two adds gave one secret")
	}

	toks, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	want := []Token{
		{Name: "ci", Caps: []string{CapHostExecute}, Created: "2026-03-01T11:30:00Z"},
		{Name: "laptop", Caps: []string{}, Created: "2026-03-01T11:30:00Z"},
	}
	for i := range toks {
		if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(toks[i].Hash) {
			t.Errorf("token %q hash %q", toks[i].Name, toks[i].Hash)
		}
		toks[i].Hash = ""
	}
	if fmt.Sprint(toks) != fmt.Sprint(want) {
		t.Errorf("List = %v, want %v", toks, want)
	}

	if tok, ok := s.Verify(ci); !ok || tok.Name != "ci" || !tok.Has(CapHostExecute) {
		t.Errorf("Verify(ci) = %v, %v", tok, ok)
	}
	if tok, ok := s.Verify(laptop); !ok || tok.Name != "laptop" || tok.Has(CapHostExecute) {
		t.Errorf("Verify(laptop) = %v, %v", tok, ok)
	}

	data, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []string{ci, laptop} {
		if bytes.Contains(data, []byte(sec)) || bytes.Contains(data, []byte(sec[4:])) {
			t.Fatalf("the store holds a secret:\n%s", data)
		}
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"version\": 1,\n  \"tokens\": [")) {
		t.Errorf("store file:\n%s", data)
	}
	tokAssertMode(t, s.Path, 0o600)
	tokAssertMode(t, filepath.Dir(s.Path), 0o700|os.ModeDir)

	if err := s.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Verify(ci); ok {
		t.Error("a revoked token still verifies")
	}
	if _, ok := s.Verify(laptop); !ok {
		t.Error("revoking ci broke laptop")
	}
	if toks, _ := s.List(); len(toks) != 1 || toks[0].Name != "laptop" {
		t.Errorf("after revoke: %v", toks)
	}
	// No temporary files left beside the store.
	ents, _ := os.ReadDir(filepath.Dir(s.Path))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if fmt.Sprint(names) != "[serve-tokens.json serve-tokens.json.lock]" {
		t.Errorf("store directory holds %v", names)
	}
}

func tokAssertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode() & (os.ModePerm | os.ModeDir); got != want {
		t.Errorf("%s has mode %v, want %v", path, got, want)
	}
}

func TestStoreRefusesBadInput(t *testing.T) {
	s := tokStore(t)
	tokAdd(t, s, "ci")
	for _, tc := range []struct {
		name string
		caps []string
		want string
		is   error
	}{
		{"ci", nil, `tokens: "ci": a token by that name exists in `, ErrTokenExists},
		{"CI", nil, `token name "CI" starts with 'C'`, nil},
		{"", nil, "a token name is empty", nil},
		{"ok", []string{"host.exec"}, `unknown capability "host.exec" (known: host.execute)`, nil},
		{"ok", []string{"HOST.EXECUTE"}, `unknown capability "HOST.EXECUTE"`, nil},
		{"ok", []string{""}, `unknown capability ""`, nil},
	} {
		_, err := s.Add(tc.name, tc.caps, tokNow)
		if err == nil || !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
			t.Errorf("Add(%q, %q) = %v, want %q", tc.name, tc.caps, err, tc.want)
		}
	}
	err := s.Revoke("nope")
	if !errors.Is(err, ErrNoSuchToken) || !strings.Contains(err.Error(), `revoke "nope": no such token in `+s.Path) {
		t.Errorf("Revoke(nope) = %v", err)
	}
	if toks, _ := s.List(); len(toks) != 1 {
		t.Errorf("refused changes changed the store: %v", toks)
	}
}

func TestCheckName(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, ok := range []string{"a", "0", "ci", "ci-bot.1_x", "9lives", long, "a-", "a.", "a_"} {
		if err := CheckName(ok); err != nil {
			t.Errorf("CheckName(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", long + "a", "-a", ".a", "_a", "A", "aB", "a b", "a/b", "a\x00", "é", "a\n", "..", "a:b", "a@b", "`"} {
		if err := CheckName(bad); err == nil {
			t.Errorf("CheckName(%q) = nil, want an error", bad)
		}
	}
}

// Verify never panics and refuses everything but a stored secret.
func TestVerifyRefusesMalformed(t *testing.T) {
	s := tokStore(t)
	good := tokAdd(t, s, "ci", CapHostExecute)
	// The last of 43 characters carries 4 bits and 2 spare bits; a
	// non-zero spare bit is another spelling of some secret, refused.
	last := good[len(good)-1]
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	stray := alphabet[strings.IndexByte(alphabet, last)^1]
	cases := []string{
		"",
		"pft_",
		"pft",
		strings.Repeat("A", 1<<20),
		"pft_" + strings.Repeat("A", 1<<20),
		strings.Repeat("\x00", tokenSecretLen),
		"pft_" + strings.Repeat("\x00", 43),
		"pft_" + strings.Repeat("\xff", 43),
		"pft_" + strings.Repeat("é", 21) + "a",
		"PFT_" + good[4:],
		"pfx_" + good[4:],
		good[:len(good)-1],
		good + "A",
		good + "\n",
		" " + good,
		good[:20] + "\n" + good[21:],
		good[:20] + "+" + good[21:],
		good[:20] + "/" + good[21:],
		good[:len(good)-1] + "=",
		good[:len(good)-1] + string(stray),
		"pft_" + strings.Repeat("A", 43), // well formed, not stored
		strings.ToUpper(good[:4]) + good[4:],
	}
	for _, c := range cases {
		if tok, ok := s.Verify(c); ok {
			t.Errorf("Verify(%.60q) = %v, true", c, tok)
		}
	}
	if _, ok := s.Verify(good); !ok {
		t.Error("control: the stored secret does not verify")
	}
	// A missing store verifies nothing.
	if _, ok := (Store{Path: filepath.Join(t.TempDir(), "none.json")}).Verify(good); ok {
		t.Error("a missing store verified a secret")
	}
}

func FuzzVerify(f *testing.F) {
	dir := f.TempDir()
	s := Store{Path: filepath.Join(dir, "tokens.json")}
	good, err := s.Add("fuzz", nil, tokNow)
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{"", "pft_", good, good[:len(good)-1] + "B", "pft_" + strings.Repeat("\xff", 43), "pft_\x00"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, secret string) {
		tok, ok := s.Verify(secret)
		if ok != (secret == good) || (ok && tok.Name != "fuzz") {
			t.Fatalf("Verify(%q) = %v, %v", secret, tok, ok)
		}
	})
}

// The file is refused unless it is a regular file of the caller's that
// no one else may read or write; each refusal has a control that reads.
func TestStoreRefusesLooseFile(t *testing.T) {
	s := tokStore(t)
	secret := tokAdd(t, s, "ci")
	if _, err := s.List(); err != nil {
		t.Fatalf("control: %v", err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o620, 0o602, 0o610} {
		if err := os.Chmod(s.Path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := s.List()
		want := fmt.Sprintf("tokens: bad store: %s has mode %04o: others may read or change it (chmod 600 %s)", s.Path, mode, s.Path)
		if !errors.Is(err, ErrBadStore) || err.Error() != want {
			t.Errorf("mode %04o: List = %v, want %q", mode, err, want)
		}
		if _, ok := s.Verify(secret); ok {
			t.Errorf("mode %04o: Verify accepted a secret from a loose store", mode)
		}
		if _, err := s.Add("other", nil, tokNow); !errors.Is(err, ErrBadStore) {
			t.Errorf("mode %04o: Add = %v, want ErrBadStore", mode, err)
		}
	}
	if err := os.Chmod(s.Path, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Verify(secret); !ok {
		t.Error("control: mode 0600 does not verify")
	}
}

func TestStoreRefusesSymlink(t *testing.T) {
	s := tokStore(t)
	secret := tokAdd(t, s, "ci")
	link := Store{Path: filepath.Join(filepath.Dir(s.Path), "link.json")}
	if err := os.Symlink(s.Path, link.Path); err != nil {
		t.Fatal(err)
	}
	_, err := link.List()
	if !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), link.Path+" is a symlink: refusing it") {
		t.Errorf("List through a symlink = %v", err)
	}
	if _, ok := link.Verify(secret); ok {
		t.Error("Verify through a symlink accepted the secret")
	}
	if _, ok := s.Verify(secret); !ok {
		t.Error("control: the target itself does not verify")
	}
	// A symlinked lock file is refused too.
	if err := os.Symlink(s.Path, link.Path+".lock"); err != nil {
		t.Fatal(err)
	}
	if _, err := link.Add("x", nil, tokNow); !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), ".lock is a symlink") {
		t.Errorf("Add with a symlinked lock = %v", err)
	}
}

func TestStoreRefusesNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := (Store{Path: fifo}).List(); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "is not a regular file") {
			t.Errorf("FIFO: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading a FIFO store blocked")
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := (Store{Path: sub}).List(); !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "is not a regular file") {
		t.Errorf("directory: %v", err)
	}
}

func TestStoreRefusesOtherOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("requires root to give a file to another uid, have euid %d", os.Geteuid())
	}
	s := tokStore(t)
	tokAdd(t, s, "ci")
	if err := os.Chown(s.Path, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := s.List()
	if !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "belongs to uid 65534, not to you (uid 0)") {
		t.Errorf("List = %v", err)
	}
	if err := os.Chown(s.Path, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(); err != nil {
		t.Errorf("control: %v", err)
	}
}

func TestStoreRefusesLooseDirectory(t *testing.T) {
	s := tokStore(t)
	tokAdd(t, s, "ci")
	dir := filepath.Dir(s.Path)
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	_, err := s.Add("two", nil, tokNow)
	if !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "has mode 0777: others could replace the store (chmod 700") {
		t.Errorf("Add in a 0777 directory = %v", err)
	}
	if err := s.Revoke("ci"); !errors.Is(err, ErrBadStore) {
		t.Errorf("Revoke in a 0777 directory = %v", err)
	}
	// Reading too (serve, list): others could put back an older store.
	if _, err := s.List(); !errors.Is(err, ErrBadStore) {
		t.Errorf("List in a 0777 directory = %v", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(); err != nil {
		t.Errorf("control, List: %v", err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(); !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "above the token store") {
		t.Errorf("List beneath a 0777 directory = %v", err)
	}
	if err := os.Chmod(filepath.Dir(dir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add("two", nil, tokNow); err != nil {
		t.Errorf("control: %v", err)
	}
}

func TestStoreRefusesHugeFile(t *testing.T) {
	s := tokStore(t)
	tokAdd(t, s, "ci")
	if err := os.Truncate(s.Path, maxTokenStoreSize+1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(); !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), "more than 1048576") {
		t.Errorf("List = %v", err)
	}
}

const (
	tokHashA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	tokHashB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

func tokEntry(name, hash, caps, created string) string {
	return fmt.Sprintf(`{"name":%q,"sha256":%q,"caps":%s,"created":%q}`, name, hash, caps, created)
}

var tokGoodEntry = tokEntry("ci", tokHashA, `["host.execute"]`, "2026-03-01T11:30:00Z")

// tokDecodeCases are stores that are not valid, and what is said of each.
var tokDecodeCases = []struct{ data, want string }{
	{``, "not a token store: EOF"},
	{`[]`, "not a token store"},
	{`null`, `no "version"`},
	{`{}`, `no "version"`},
	{`{"version":1}`, `no "tokens" list`},
	{`{"version":1,"tokens":null}`, `no "tokens" list`},
	{`{"version":2,"tokens":[]}`, "version 2: this launcher reads version 1"},
	{`{"version":"1","tokens":[]}`, "not a token store"},
	{`{"version":1,"tokens":[],"extra":1}`, `unknown field "extra"`},
	{`{"version":1,"tokens":[]} {}`, "more after the JSON object"},
	{`{"version":1,"tokens":[]} x`, "more after the JSON object"},
	{`{"version":1,"tokens":[{"name":"ci","sha256":"` + tokHashA + `","caps":[],"created":"2026-03-01T11:30:00Z","secret":"x"}]}`, `unknown field "secret"`},
	{`{"version":1,"tokens":[` + tokEntry("CI", tokHashA, `[]`, "2026-03-01T11:30:00Z") + `]}`, `token 1: tokens: token name "CI"`},
	{`{"version":1,"tokens":[` + tokEntry("ci", tokHashA[1:], `[]`, "2026-03-01T11:30:00Z") + `]}`, `token "ci": sha256 is 63 characters, not 64`},
	{`{"version":1,"tokens":[` + tokEntry("ci", strings.ToUpper(tokHashA), `[]`, "2026-03-01T11:30:00Z") + `]}`, "sha256 is not lower-case hex"},
	{`{"version":1,"tokens":[` + tokEntry("ci", "g"+tokHashA[1:], `[]`, "2026-03-01T11:30:00Z") + `]}`, "sha256 is not lower-case hex"},
	{`{"version":1,"tokens":[` + tokEntry("ci", tokHashA, `["root"]`, "2026-03-01T11:30:00Z") + `]}`, `unknown capability "root"`},
	{`{"version":1,"tokens":[` + tokEntry("ci", tokHashA, `["host.execute","host.execute"]`, "2026-03-01T11:30:00Z") + `]}`, "caps are not sorted and distinct"},
	{`{"version":1,"tokens":[` + tokEntry("ci", tokHashA, `[]`, "2026-03-01") + `]}`, `created "2026-03-01" is not an RFC 3339 time`},
	{`{"version":1,"tokens":[` + tokEntry("ci", tokHashA, `[]`, "") + `]}`, `created "" is not an RFC 3339 time`},
	{`{"version":1,"tokens":[` + tokGoodEntry + `,` + tokEntry("ci", tokHashB, `[]`, "2026-03-01T11:30:00Z") + `]}`, `token "ci" appears twice`},
	{`{"version":1,"tokens":[` + tokGoodEntry + `,` + tokEntry("cd", tokHashA, `[]`, "2026-03-01T11:30:00Z") + `]}`, `token "cd" has the same sha256 as another`},
}

func TestStoreRefusesInvalid(t *testing.T) {
	dir := t.TempDir()
	write := func(data string) Store {
		s := Store{Path: filepath.Join(dir, "s.json")}
		if err := os.WriteFile(s.Path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Control: a valid store, written by hand, reads.
	good := `{"version":1,"tokens":[` + tokGoodEntry + `,` + tokEntry("b", tokHashB, `null`, "2026-03-01T12:30:00+01:00") + `]}`
	toks, err := write(good).List()
	if err != nil || len(toks) != 2 || toks[0].Name != "b" || toks[0].Caps == nil {
		t.Fatalf("control: %v, %v", toks, err)
	}
	for _, tc := range tokDecodeCases {
		s := write(tc.data)
		_, err := s.List()
		if !errors.Is(err, ErrBadStore) || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "tokens: bad store: "+s.Path+": ") {
			t.Errorf("%s:\n got %v\nwant …%s", tc.data, err, tc.want)
		}
		if _, err := s.Add("new", nil, tokNow); !errors.Is(err, ErrBadStore) {
			t.Errorf("%s: Add = %v, want ErrBadStore", tc.data, err)
		}
		if got, _ := os.ReadFile(s.Path); string(got) != tc.data {
			t.Errorf("%s: a refused store was rewritten", tc.data)
		}
	}
}

func FuzzDecodeTokens(f *testing.F) {
	f.Add(`{"version":1,"tokens":[` + tokGoodEntry + `]}`)
	for _, tc := range tokDecodeCases {
		f.Add(tc.data)
	}
	f.Fuzz(func(t *testing.T, data string) {
		toks, err := decodeTokens([]byte(data))
		if err != nil {
			return
		}
		// What reads is what checkTokens accepts, sorted by name.
		if err := checkTokens(toks); err != nil {
			t.Fatalf("decoded a store that does not check: %v", err)
		}
		if !slices.IsSortedFunc(toks, func(a, b Token) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatal("decoded tokens are not sorted")
		}
	})
}

// Changes from many Stores at once (each its own lock file descriptor, as
// separate processes have) lose none of one another.
func TestStoreConcurrentAdds(t *testing.T) {
	path := tokStore(t).Path
	const n = 20
	secrets := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			sec, err := Store{Path: path}.Add(fmt.Sprintf("t%02d", i), nil, tokNow)
			secrets[i] = sec
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	toks, err := Store{Path: path}.List()
	if err != nil {
		t.Fatal(err)
	}
	if len(toks) != n {
		t.Fatalf("%d tokens after %d concurrent adds: %v", len(toks), n, toks)
	}
	for i, sec := range secrets {
		if tok, ok := (Store{Path: path}).Verify(sec); !ok || tok.Name != fmt.Sprintf("t%02d", i) {
			t.Errorf("secret %d verifies as %v, %v", i, tok, ok)
		}
	}
	// And revokes at once, too.
	for i := range n / 2 {
		wg.Go(func() {
			if err := (Store{Path: path}).Revoke(fmt.Sprintf("t%02d", i)); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if toks, _ := (Store{Path: path}).List(); len(toks) != n-n/2 {
		t.Errorf("%d tokens after %d revokes of %d", len(toks), n/2, n)
	}
}

func TestDefaultStorePath(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", "/xdg")
	if p, err := DefaultStorePath(); err != nil || p != "/xdg/pinfold/serve-tokens.json" {
		t.Errorf("with XDG_CONFIG_HOME: %q, %v", p, err)
	}
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", "/home/me")
	if p, err := DefaultStorePath(); err != nil || p != "/home/me/.config/pinfold/serve-tokens.json" {
		t.Errorf("without: %q, %v", p, err)
	}
}

// A store is decoded once per version of its file: bad tokens checked
// again and again (a peer over its failure limit) cost no read and
// decode each; a revocation (a new file) and an edit in place (a new
// ctime) are seen at once.
func TestVerifyDecodesOncePerVersion(t *testing.T) {
	s := tokStore(t)
	secret := tokAdd(t, s, "ci")
	decodes := 0
	testHookDecode = func() { decodes++ }
	defer func() { testHookDecode = nil }()
	if _, ok := s.Verify(secret); !ok {
		t.Fatal("a valid token refused")
	}
	bad := secret[:len(secret)-2] + "AA"
	for range 100 {
		if _, ok := s.Verify(bad); ok {
			t.Fatal("a bad token verified")
		}
	}
	if decodes > 1 {
		t.Errorf("%d decodes of an unchanged store for 101 checks", decodes)
	}
	if err := s.Revoke("ci"); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Verify(secret); ok {
		t.Error("a revoked token still verifies")
	}
	// Put it back by writing the old bytes in place: another version.
	second := tokAdd(t, s, "ci2")
	b, err := os.ReadFile(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Verify(second); !ok {
		t.Fatal("a valid token refused")
	}
	if err := os.WriteFile(s.Path, bytes.Replace(b, []byte(`"ci2"`), []byte(`"cj2"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, ok := s.Verify(second); !ok || tok.Name != "cj2" {
		t.Errorf("an edit in place was not seen: %+v %v", tok, ok)
	}
}
