package cdp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"strings"
)

// Navigate loads url in the page and waits for its load event. A
// navigation that only changes the fragment finishes without one.
func (b *Browser) Navigate(ctx context.Context, url string) error {
	if err := b.Call(ctx, "Page.enable", nil, nil); err != nil {
		return err
	}
	loaded, stop := b.subscribe("Page.loadEventFired")
	defer stop()
	var nav struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := b.Call(ctx, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return err
	}
	if nav.ErrorText != "" {
		return fmt.Errorf("cdp: navigate to %s: %s", url, nav.ErrorText)
	}
	if nav.LoaderID == "" {
		return nil // same-document navigation
	}
	select {
	case <-loaded:
		return nil
	case <-b.dead:
		return b.deadError("Page.navigate")
	case <-ctx.Done():
		return fmt.Errorf("cdp: navigate to %s: waiting for load: %w", url, ctx.Err())
	}
}

// remoteObject is the part of Runtime.RemoteObject that we use.
type remoteObject struct {
	Type                string          `json:"type"`
	Subtype             string          `json:"subtype"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
	Description         string          `json:"description"`
}

type exceptionDetails struct {
	Text       string        `json:"text"`
	URL        string        `json:"url"`
	LineNumber int           `json:"lineNumber"`
	Exception  *remoteObject `json:"exception"`
}

// String gives the exception's description (message and stack) when it
// has one, else the text Chromium reports.
func (e *exceptionDetails) String() string {
	if e.Exception != nil {
		if e.Exception.Description != "" {
			return e.Exception.Description
		}
		if len(e.Exception.Value) > 0 {
			return e.Text + " " + string(e.Exception.Value)
		}
	}
	return e.Text
}

// Eval evaluates the JavaScript expression expr in the page, awaiting it
// if it is a promise, and decodes its JSON value into result unless result
// is nil. An undefined value leaves result untouched. A thrown exception
// becomes an error carrying its text.
func (b *Browser) Eval(ctx context.Context, expr string, result any) error {
	params := map[string]any{
		"expression":    expr,
		"returnByValue": true,
		"awaitPromise":  true,
	}
	var res struct {
		Result           remoteObject      `json:"result"`
		ExceptionDetails *exceptionDetails `json:"exceptionDetails"`
	}
	if err := b.Call(ctx, "Runtime.evaluate", params, &res); err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("cdp: eval %s: %s", abbrev(expr), res.ExceptionDetails)
	}
	if result == nil {
		return nil
	}
	if res.Result.UnserializableValue != "" {
		return fmt.Errorf("cdp: eval %s: value %s has no JSON form", abbrev(expr), res.Result.UnserializableValue)
	}
	if len(res.Result.Value) == 0 {
		return nil // undefined
	}
	if err := json.Unmarshal(res.Result.Value, result); err != nil {
		return fmt.Errorf("cdp: eval %s: decode: %w", abbrev(expr), err)
	}
	return nil
}

func abbrev(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return fmt.Sprintf("%q", s)
}

// SetFileInput sets the files of the <input type=file> matched by the CSS
// selector, as if the user had picked them. Chromium fires the input's
// input and change events. Relative paths are made absolute.
func (b *Browser) SetFileInput(ctx context.Context, selector string, paths ...string) error {
	files := make([]string, len(paths))
	for i, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return fmt.Errorf("cdp: set file input: %w", err)
		}
		files[i] = abs
	}
	var doc struct {
		Root struct {
			NodeID int64 `json:"nodeId"`
		} `json:"root"`
	}
	if err := b.Call(ctx, "DOM.getDocument", map[string]any{"depth": 0}, &doc); err != nil {
		return err
	}
	var found struct {
		NodeID int64 `json:"nodeId"`
	}
	params := map[string]any{"nodeId": doc.Root.NodeID, "selector": selector}
	if err := b.Call(ctx, "DOM.querySelector", params, &found); err != nil {
		return err
	}
	if found.NodeID == 0 {
		return fmt.Errorf("cdp: set file input: no element matches %q", selector)
	}
	return b.Call(ctx, "DOM.setFileInputFiles", map[string]any{"nodeId": found.NodeID, "files": files}, nil)
}

// Viewport emulates a window of width×height CSS pixels at device scale
// factor 1; mobile turns on mobile emulation (meta viewport, overlay
// scrollbars). Note that a mobile page without a width=device-width meta
// viewport is laid out 980 pixels wide.
func (b *Browser) Viewport(ctx context.Context, width, height int, mobile bool) error {
	params := map[string]any{
		"width":             width,
		"height":            height,
		"deviceScaleFactor": 1,
		"mobile":            mobile,
	}
	return b.Call(ctx, "Emulation.setDeviceMetricsOverride", params, nil)
}

// Screenshot returns a PNG image of the whole page, including the parts
// outside the viewport.
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var metrics struct {
		CSSContentSize struct {
			Width  float64 `json:"width"`
			Height float64 `json:"height"`
		} `json:"cssContentSize"`
	}
	if err := b.Call(ctx, "Page.getLayoutMetrics", nil, &metrics); err != nil {
		return nil, err
	}
	// The content size leaves out a classic (desktop) scrollbar, so a tall
	// page would come out narrower than the window; take the window's
	// width when it is larger. The scrollbar itself is not drawn, since
	// the capture makes the viewport as tall as the page.
	var window float64
	if err := b.Eval(ctx, "innerWidth", &window); err != nil {
		return nil, err
	}
	params := map[string]any{
		"format":                "png",
		"captureBeyondViewport": true,
	}
	// Sizes may carry float noise (980.00006); do not round that up.
	w := max(math.Ceil(metrics.CSSContentSize.Width-0.01), window)
	h := math.Ceil(metrics.CSSContentSize.Height - 0.01)
	if w > 0 && h > 0 {
		params["clip"] = map[string]any{"x": 0, "y": 0, "width": w, "height": h, "scale": 1}
	}
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.Call(ctx, "Page.captureScreenshot", params, &shot); err != nil {
		return nil, err
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("cdp: Page.captureScreenshot: decode: %w", err)
	}
	return png, nil
}

// Console returns the console messages, uncaught exceptions and browser
// log entries (such as failed resource loads) seen so far, one line each,
// for test failure output.
func (b *Browser) Console() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.console...)
}

// consoleLine formats the events that Console reports.
func consoleLine(method string, params json.RawMessage) (string, bool) {
	switch method {
	case "Runtime.consoleAPICalled":
		var ev struct {
			Type string         `json:"type"`
			Args []remoteObject `json:"args"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return "", false
		}
		parts := make([]string, len(ev.Args))
		for i, a := range ev.Args {
			parts[i] = a.text()
		}
		return "console." + ev.Type + ": " + strings.Join(parts, " "), true
	case "Runtime.exceptionThrown":
		var ev struct {
			ExceptionDetails exceptionDetails `json:"exceptionDetails"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return "", false
		}
		return "uncaught: " + ev.ExceptionDetails.String(), true
	case "Log.entryAdded":
		var ev struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		if json.Unmarshal(params, &ev) != nil {
			return "", false
		}
		e := ev.Entry
		line := "log." + e.Level + " (" + e.Source + "): " + e.Text
		if e.URL != "" {
			line += " [" + e.URL + "]"
		}
		return line, true
	}
	return "", false
}

// text renders a console argument roughly as DevTools would.
func (o remoteObject) text() string {
	switch {
	case o.Type == "string" && len(o.Value) > 0:
		var s string
		if json.Unmarshal(o.Value, &s) == nil {
			return s
		}
	case o.UnserializableValue != "":
		return o.UnserializableValue
	case o.Description != "":
		return o.Description
	case len(o.Value) > 0:
		return string(o.Value)
	}
	return o.Type
}

// keys are the keys Press knows, with their DOM code, Windows virtual
// key code and the text they type.
var keys = map[string]struct {
	code string
	vk   int
	text string
}{
	"Tab":   {"Tab", 9, ""},
	"Enter": {"Enter", 13, "\r"},
	" ":     {"Space", 32, " "},
}

// Press types one key as the keyboard would (down, then up), to the
// focused element; shift holds Shift. Only the keys in keys are known.
func (b *Browser) Press(ctx context.Context, key string, shift bool) error {
	k, ok := keys[key]
	if !ok {
		return fmt.Errorf("cdp: Press: unknown key %q", key)
	}
	mods := 0
	if shift {
		mods = 8
	}
	for _, typ := range []string{"keyDown", "keyUp"} {
		params := map[string]any{
			"type": typ, "key": key, "code": k.code, "modifiers": mods,
			"windowsVirtualKeyCode": k.vk, "nativeVirtualKeyCode": k.vk,
		}
		if typ == "keyDown" && k.text != "" {
			params["text"] = k.text
		}
		if err := b.Call(ctx, "Input.dispatchKeyEvent", params, nil); err != nil {
			return err
		}
	}
	return nil
}
