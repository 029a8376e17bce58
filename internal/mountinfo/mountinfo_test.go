package mountinfo

import "testing"

// Locate names a path by its device and its place in that device's file
// system: the same for a tree and a bind mount of it, whichever is
// asked; the last mount at a point hides the ones before it.
func TestLocate(t *testing.T) {
	ms := []Mount{
		{Dev: "8:1", Root: "/", Point: "/"},
		{Dev: "8:2", Root: "/", Point: "/home"},
		{Dev: "8:2", Root: "/ann/ws/tools", Point: "/opt/pf"},
		{Dev: "0:5", Root: "/", Point: "/opt/hidden"},
		{Dev: "0:6", Root: "/", Point: "/opt/hidden"},
	}
	for _, c := range []struct{ path, dev, fs string }{
		{"/", "8:1", "/"},
		{"/etc/passwd", "8:1", "/etc/passwd"},
		{"/home", "8:2", "/"},
		{"/homeless", "8:1", "/homeless"},
		{"/home/ann/ws/tools/launcher", "8:2", "/ann/ws/tools/launcher"},
		{"/opt/pf/launcher", "8:2", "/ann/ws/tools/launcher"},
		{"/opt/pf", "8:2", "/ann/ws/tools"},
		{"/opt/hidden/x", "0:6", "/x"},
	} {
		dev, fs, ok := Locate(ms, c.path)
		if !ok || dev != c.dev || fs != c.fs {
			t.Errorf("Locate(%s) = %s %s %v, want %s %s", c.path, dev, fs, ok, c.dev, c.fs)
		}
	}
	if _, _, ok := Locate(ms[1:2], "/etc"); ok {
		t.Error("a path no mount holds was located")
	}
}

// A line's file system type, source and super options come after the
// optional fields' "-", however many there are; an overlay's layers are
// read from its super options, a comma escaped within a value.
func TestParseSuper(t *testing.T) {
	// As Linux 6.18 writes an overlay whose layers are "a b", "c,d" (given
	// as c\,d) and "e:f" (e\:f): mountinfo spells space, comma and
	// backslash in octal.
	ms := parse(`48 26 0:39 / /tmp/ovt/m rw,relatime shared:1 master:2 - overlay overlay rw,lowerdir=/a\040b:/c\134\054d:/e\134:f,upperdir=/u,workdir=/w,uuid=on` + "\n" +
		"22 1 8:1 / / rw - ext4 /dev/my\\040disk rw\n" +
		"23 1 8:2 / /short rw\n")
	if len(ms) != 3 {
		t.Fatalf("%d mounts", len(ms))
	}
	if m := ms[0]; m.Type != "overlay" || m.Source != "overlay" || m.Point != "/tmp/ovt/m" {
		t.Errorf("overlay line: %+v", m)
	}
	for key, want := range map[string]string{"lowerdir": `/a b:/c\,d:/e\:f`, "upperdir": "/u", "workdir": "/w", "uuid": "on"} {
		if got, ok := ms[0].SuperOption(key); !ok || got != want {
			t.Errorf("SuperOption(%s) = %q, %v; want %q", key, got, ok, want)
		}
	}
	plus := Mount{Super: `ro,lowerdir+=/a,lowerdir+=/b\040c,datadir+=/d`}
	if got := plus.SuperOptions("lowerdir+"); len(got) != 2 || got[0] != "/a" || got[1] != "/b c" {
		t.Errorf("SuperOptions(lowerdir+) = %q", got)
	}
	if _, ok := ms[0].SuperOption("rw"); ok {
		t.Error("a flag without = read as an option with a value")
	}
	if m := ms[1]; m.Type != "ext4" || m.Source != "/dev/my disk" {
		t.Errorf("ext4 line: %+v", m)
	}
	if m := ms[2]; m.Type != "" || m.Point != "/short" {
		t.Errorf("a line without the separator: %+v", m)
	}
}
