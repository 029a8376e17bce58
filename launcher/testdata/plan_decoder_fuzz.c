// A harness for stage 2's plan decoder (pf_decode_plan in
// stage2_linux.c) outside Go, where the sanitizers and libFuzzer see the
// C: Go's fuzzer measures coverage of Go code only, and a read past the
// plan's buffer that does not crash goes unseen without ASan. doc.go
// says how to build and run it. It lives in testdata so that cgo does not
// compile it into the launcher.
//
// With libFuzzer (clang): LLVMFuzzerTestOneInput is the target. Without
// it (gcc, -DPF_FILES): main decodes each file named on its command line
// (FuzzPlanDecoder's corpus, for one).
#include "../stage2_linux.c"

// Stage 2's constructor calls it; the harness needs no image paged in.
void pf_populate_image(void) {}

static size_t touch_all(char **v)
{
	size_t n = 0;
	for (; v && *v; v++)
		n += strlen(*v);
	return n;
}

// decode decodes size bytes from a buffer of exactly that size (a read
// past it lands in ASan's redzone) and, when the plan is accepted, reads
// every string to its NUL, as stage 2 will.
static void decode(const uint8_t *data, size_t size)
{
	unsigned char *b = malloc(size ? size : 1);
	if (!b)
		abort();
	memcpy(b, data, size);
	struct plan p;
	const char *err = pf_decode_plan(b, size, &p);
	if (!err) {
		volatile size_t n = touch_all(p.argv) + touch_all(p.env) + touch_all(p.hide);
		n += strlen(p.path) + strlen(p.dir) + strlen(p.home);
		for (uint32_t i = 0; i < p.ntrees; i++)
			n += strlen(p.trees[i].path);
		for (uint32_t i = 0; i < p.nmasks; i++)
			n += strlen(p.masks[i].path);
		for (uint32_t i = 0; i < p.nrlimits; i++)
			n += strlen(p.rlimits[i].name);
		for (uint32_t i = 0; i < p.npaths; i++)
			n += strlen(p.paths[i].path);
		for (uint32_t i = 0; i < p.nfilter; i++)
			n += p.filter[i].k;
		(void)n;
	}
	pf_free_plan(&p);
	free(b);
}

#ifdef PF_FILES
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		static unsigned char buf[max_plan + 1];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		decode(buf, n);
	}
	printf("%d plans decoded\n", argc - 1);
	return 0;
}
#else
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	decode(data, size);
	return 0;
}
#endif
