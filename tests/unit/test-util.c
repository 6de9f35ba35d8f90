/* Unit tests of the util layer: strbuf, number parsing, PATH lookup and
 * run_command (exit codes, signals, timeout, exec failure, env, cwd). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/util.h"
#include "util/strbuf.h"
#include "util/run-command.h"
#include "util/enum.h"

static void test_strbuf__grows_and_formats(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	assert_string_equal(sb.buf, "");
	for (int i = 0; i < 1000; i++)
		strbuf_addf(&sb, "%d,", i);
	assert_int_equal(sb.len, strlen(sb.buf));
	assert_memory_equal(sb.buf, "0,1,2,", 6);
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "abc  \n");
	strbuf_rtrim(&sb);
	assert_string_equal(sb.buf, "abc");
	strbuf_release(&sb);
}

static void test_util__parse_uint_rejects_junk(void **state)
{
	unsigned long v;

	assert_int_equal(parse_uint("42", 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(parse_uint("101", 100, &v), -1);
	assert_int_equal(parse_uint("-1", 100, &v), -1);
	assert_int_equal(parse_uint("4x", 100, &v), -1);
	assert_int_equal(parse_uint("", 100, &v), -1);
	assert_int_equal(parse_uint("99999999999999999999999", ~0UL, &v), -1);
	/* strtoul would skip the blank and take the sign */
	assert_int_equal(parse_uint(" 1", 100, &v), -1);
	assert_int_equal(parse_uint("\t1", 100, &v), -1);
	assert_int_equal(parse_uint("+1", 100, &v), -1);
	assert_int_equal(parse_uint("1 ", 100, &v), -1);
	assert_int_equal(parse_uint("0", 100, &v), 0);
	assert_int_equal(v, 0);
}

static void test_util__clean_text_replaces_every_control_character(void **state)
{
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_add_clean(&sb, "a\033[31mb\rc\nd\te\x7f" "f\xc2\x9b" "g\xc3\xa9h");
	/* C0, DEL and C1 (as UTF-8) become '?'; other UTF-8 stays */
	assert_string_equal(sb.buf, "a?[31mb?c?d?e?f?g\xc3\xa9h");
	strbuf_release(&sb);
	/* bidirectional embeddings, overrides (U+202A-E) and isolates
	 * (U+2066-9) too: text must read in the order it is stored */
	strbuf_add_clean(&sb, "a\xe2\x80\xaa" "b\xe2\x80\xae" "c\xe2\x81\xa6" "d\xe2\x81\xa9" "e\xe2\x80\xa9" "f");
	assert_string_equal(sb.buf, "a?b?c?d?e\xe2\x80\xa9" "f");
	strbuf_release(&sb);
	assert_int_equal(has_control_chars("rev\xe2\x80\xae"), 1);
	assert_int_equal(has_control_chars("caf\xc3\xa9"), 0);
	strbuf_add_clean(&sb, NULL);
	assert_string_equal(sb.buf, "");
	assert_int_equal(has_control_chars("plain text"), 0);
	assert_int_equal(has_control_chars("x\ny"), 1);
	assert_int_equal(has_control_chars("\x1b"), 1);
	assert_int_equal(has_control_chars(NULL), 0);
	assert_int_equal(check_no_controls("--remote", "file:///x"), 0);
	assert_int_equal(check_no_controls("--remote", "file:///x\nfoo"), -1);
	/* the message itself is one line */
	assert_non_null(strstr(error_last(), "--remote 'file:///x?foo': control characters"));
}

static void assert_shell_word(const char *w, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_shell_word(&sb, w);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void test_util__shell_word_quotes_for_bash(void **state)
{
	(void)state;
	assert_shell_word("./test.sh", "./test.sh");
	assert_shell_word("", "''");
	assert_shell_word("a b", "'a b'");
	assert_shell_word("it's", "'it'\\''s'");
	assert_shell_word("$HOME;rm", "'$HOME;rm'");
	/* control characters: $'...' with named or \xHH escapes */
	assert_shell_word("nl\nx", "$'nl\\nx'");
	assert_shell_word("t\tr\r", "$'t\\tr\\r'");
	assert_shell_word("e\033[1m", "$'e\\x1b[1m'");
	assert_shell_word("q'\\\n", "$'q\\'\\\\\\n'");
}

static void assert_url(const char *url, int keep_path, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_url_redacted(&sb, url, keep_path);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void test_util__url_redaction_cuts_credentials(void **state)
{
	(void)state;
	assert_url("https://hooks.example/services/T/B/SECRET", 0, "https://hooks.example/...");
	assert_url("https://u:pw@hooks.example:8443/x?token=abc", 0, "https://hooks.example:8443/...");
	assert_url("https://hooks.example", 0, "https://hooks.example");
	assert_url("https://u:pw@git.example/linux.git", 1, "https://git.example/linux.git");
	assert_url("https://git.example/linux.git?private_token=abc#x", 1, "https://git.example/linux.git?...");
	/* the last '@' of the authority ends the user info */
	assert_url("https://a@b:c@host/p", 1, "https://host/p");
	assert_url("ssh://git@host/r.git", 1, "ssh://host/r.git");
	assert_url("file:///srv/linux.git", 1, "file:///srv/linux.git");
	/* not scheme://: paths and scp-like addresses as they are */
	assert_url("/srv/linux.git", 1, "/srv/linux.git");
	assert_url("git@host:linux.git", 1, "git@host:linux.git");
	assert_url("origin", 0, "origin");
	/* and never a control character */
	assert_url("https://h\nx/p", 0, "https://h?x/...");
}

static void test_util__find_executable(void **state)
{
	char *p;

	assert_int_equal(find_executable("sh", &p), 1);
	assert_non_null(p);
	free(p);
	assert_int_equal(find_executable("/bin/sh", &p), 1);
	free(p);
	assert_int_equal(find_executable("klab-no-such-command-xyz", &p), 0);
	assert_null(p);
	assert_int_equal(find_executable("/etc/passwd", &p), 0);
}

static void run(const char *const *argv, int64_t timeout, struct run_result *r, const char *out)
{
	struct run_opts o = { .argv = argv, .timeout_ms = timeout, .output_path = out };

	assert_int_equal(run_command(&o, r), 0);
}

static void test_run_command__exit_codes(void **state)
{
	static const char *const ok[] = { "true", NULL };
	static const char *const skip[] = { "sh", "-c", "exit 125", NULL };
	struct run_result r;

	run(ok, 0, &r, "/dev/null");
	assert_int_equal(r.status, RUN_EXITED);
	assert_int_equal(r.exit_code, 0);
	run(skip, 0, &r, "/dev/null");
	assert_int_equal(r.status, RUN_EXITED);
	assert_int_equal(r.exit_code, 125);
}

static void test_run_command__signal_is_reported(void **state)
{
	static const char *const argv[] = { "sh", "-c", "kill -TERM $$", NULL };
	struct run_result r;

	run(argv, 0, &r, "/dev/null");
	assert_int_equal(r.status, RUN_SIGNALED);
	assert_int_equal(r.signal, SIGTERM);
}

static void test_run_command__timeout_kills_the_process_group(void **state)
{
	static const char *const argv[] = { "sh", "-c", "sleep 30 & sleep 30", NULL };
	struct run_result r;
	int64_t t0 = now_ms();

	run(argv, 300, &r, "/dev/null");
	assert_int_equal(r.status, RUN_TIMEOUT);
	assert_true(now_ms() - t0 < 10000);
}

static void test_run_command__exec_failure_is_not_an_exit_code(void **state)
{
	static const char *const argv[] = { "/nonexistent/klab-test-cmd", NULL };
	struct run_result r;

	run(argv, 0, &r, "/dev/null");
	assert_int_equal(r.status, RUN_EXEC_FAILED);
	assert_int_not_equal(r.errno_value, 0);
}

static void test_run_command__env_cwd_and_output(void **state)
{
	static const char *const argv[] = { "sh", "-c", "echo \"$KLAB_X:$(pwd)\"; echo err >&2", NULL };
	static const char *const env[] = { "KLAB_X=hello", NULL };
	char tmpl[] = "/tmp/klab-test-run.XXXXXX";
	char *out, *text, *expect;
	struct run_opts o = { .argv = argv, .env = env, .dir = "/" };
	struct run_result r;

	assert_non_null(mkdtemp(tmpl));
	out = xstrfmt("%s/out.log", tmpl);
	o.output_path = out;
	assert_int_equal(run_command(&o, &r), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(read_file(out, 4096, &text, NULL), 0);
	expect = "hello:/\nerr\n";
	assert_string_equal(text, expect);
	free(text);
	unlink(out);
	rmdir(tmpl);
	free(out);
}

struct lines {
	int n;
	char last[64];
	int pid;
};

static void collect_line(const char *line, size_t len, void *data)
{
	struct lines *l = data;
	l->n++;
	snprintf(l->last, sizeof(l->last), "%s", line);
	assert_int_equal(strlen(line), len);
}

static void note_start(int pid, void *data)
{
	((struct lines *)data)->pid = pid;
}

static void test_run_command__streams_lines_and_still_logs(void **state)
{
	static const char *const argv[] = { "sh", "-c", "for i in 1 2 3; do echo line$i; done; printf tail", NULL };
	char tmpl[] = "/tmp/klab-test-lines.XXXXXX";
	struct lines l = { 0 };
	struct run_opts o = { .argv = argv, .on_line = collect_line, .on_line_data = &l, .on_start = note_start };
	struct run_result r;
	char *out, *text;

	assert_non_null(mkdtemp(tmpl));
	out = xstrfmt("%s/log", tmpl);
	o.output_path = out;
	assert_int_equal(run_command(&o, &r), 0);
	assert_int_equal(r.status, RUN_EXITED);
	assert_int_equal(l.n, 4);		/* the unterminated last line too */
	assert_string_equal(l.last, "tail");
	assert_true(l.pid > 1);
	assert_int_equal(read_file(out, 4096, &text, NULL), 0);
	assert_string_equal(text, "line1\nline2\nline3\ntail");
	free(text);
	unlink(out);
	rmdir(tmpl);
	free(out);
}

static int stop_now(void *data)
{
	return 1;
}

static void test_run_command__should_stop_cancels(void **state)
{
	static const char *const argv[] = { "sleep", "30", NULL };
	struct run_opts o = { .argv = argv, .should_stop = stop_now, .output_path = "/dev/null" };
	struct run_result r;

	assert_int_equal(run_command(&o, &r), 0);
	assert_int_equal(r.status, RUN_CANCELLED);
	assert_true(r.elapsed_ms < 10000);
}

static void test_util__write_file_atomic_and_read_limit(void **state)
{
	char tmpl[] = "/tmp/klab-test-file.XXXXXX";
	char *p, *text;
	size_t len;

	assert_non_null(mkdtemp(tmpl));
	p = xstrfmt("%s/f", tmpl);
	assert_int_equal(write_file_atomic(p, "0123456789", 10), 0);
	assert_int_equal(read_file(p, 100, &text, &len), 0);
	assert_int_equal(len, 10);
	free(text);
	assert_int_equal(read_file(p, 5, &text, &len), -1);
	assert_null(text);
	unlink(p);
	rmdir(tmpl);
	free(p);
}

static void test_util__write_file_atomic_mode_replaces_a_public_file_privately(void **state)
{
	char tmpl[] = "/tmp/klab-test-mode.XXXXXX";
	mode_t old = umask(022);
	struct stat st;
	char *p;

	assert_non_null(mkdtemp(tmpl));
	p = xstrfmt("%s/build.log", tmpl);
	assert_int_equal(write_file_atomic(p, "old", 3), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	assert_int_equal(write_file_atomic_mode(p, "", 0, 0600), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, 0);
	umask(old);
	unlink(p);
	rmdir(tmpl);
	free(p);
}

static void test_util__mkdir_p(void **state)
{
	char tmpl[] = "/tmp/klab-test-mkdir.XXXXXX";
	char *p, *cmd;

	assert_non_null(mkdtemp(tmpl));
	p = xstrfmt("%s/a/b/c", tmpl);
	assert_int_equal(mkdir_p(p, 0755), 0);
	assert_int_equal(mkdir_p(p, 0755), 0);
	assert_int_equal(access(p, F_OK), 0);
	cmd = xstrfmt("rm -rf '%s'", tmpl);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(p);
}

/* A child that has exited and been reaped is gone; this process, and
 * PID 1 (another user's when not root: EPERM), are not; nonsense ids are
 * never "gone" (nothing may be cleaned up on their account). */
static void test_util__process_gone(void **state)
{
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	assert_int_equal(process_gone(pid), 1);
	assert_int_equal(process_gone(getpid()), 0);
	assert_int_equal(process_gone(1), 0);
	assert_int_equal(process_gone(0), 0);
	assert_int_equal(process_gone(-5), 0);
	assert_int_equal(process_gone(1L << 40), 0);
}

static void test_util__name_owner_pid(void **state)
{
	(void)state;
	assert_int_equal(name_owner_pid(".tmp-abc-def-1234", ".tmp-"), 1234);
	assert_int_equal(name_owner_pid(".tmp-x-7", ".tmp-"), 7);
	assert_int_equal(name_owner_pid("tmp-x-7", ".tmp-"), 0);
	assert_int_equal(name_owner_pid(".tmp-x-", ".tmp-"), 0);
	assert_int_equal(name_owner_pid(".tmp-x-12a", ".tmp-"), 0);
	assert_int_equal(name_owner_pid(".tmp-x-0", ".tmp-"), 0);
	assert_int_equal(name_owner_pid(".tmp-x-99999999999999999999999", ".tmp-"), 0);
	assert_int_equal(name_owner_pid(".tmp-", ".tmp-"), 0);
}

/* A log over the limit keeps its first and last bytes with a line that
 * says what was cut; one within it is left alone. */
static void test_util__log_trim_keeps_head_and_tail(void **state)
{
	char d[] = "/tmp/klab-test-logtrim.XXXXXX";
	size_t n = 1000000, limit = 65536, len;
	char *path, *small, *buf, *got, *mark;

	(void)state;
	assert_non_null(mkdtemp(d));
	path = xstrfmt("%s/step.log", d);
	small = xstrfmt("%s/small.log", d);
	buf = xmalloc(n);
	for (size_t i = 0; i < n; i++)
		buf[i] = (char)('a' + i % 26);
	assert_int_equal(write_file_atomic(path, buf, n), 0);
	assert_int_equal(write_file_atomic(small, buf, 1000), 0);
	assert_int_equal(log_trim(small, limit), 0);
	assert_int_equal(log_trim(path, 0), 0);	/* no limit */
	assert_int_equal(log_trim(path, limit), 1);
	assert_int_equal(read_file(path, n, &got, &len), 0);
	assert_true(len <= limit);
	assert_true(len > limit - 200);
	/* the head as it was, then the line, then the tail as it was */
	assert_memory_equal(got, buf, limit / 2);
	mark = strstr(got, "[klab: ");
	assert_non_null(mark);
	assert_ptr_equal(mark, got + limit / 2 + 1);
	assert_non_null(strstr(mark, "bytes of this log cut here"));
	assert_non_null(strstr(mark, "log_limit = 65536"));
	{
		size_t tail = len - (size_t)(strchr(mark, '\n') + 1 - got);
		char want[64];

		snprintf(want, sizeof(want), "[klab: %zu bytes", n - limit / 2 - tail);
		assert_non_null(strstr(mark, want));
		assert_memory_equal(got + len - tail, buf + n - tail, tail);
	}
	/* a second trim finds it within the limit; a missing log is none */
	assert_int_equal(log_trim(path, limit), 0);
	free(got);
	unlink(path);
	assert_int_equal(log_trim(path, limit), 0);
	unlink(small);
	rmdir(d);
	free(buf);
	free(path);
	free(small);
}

static void test_util__files_identical_compares_bytes(void **state)
{
	char d[] = "/tmp/klab-test-ident.XXXXXX";
	char *a, *b, *c, *big1, *big2, *buf;
	size_t n = 200000;

	(void)state;
	assert_non_null(mkdtemp(d));
	a = xstrfmt("%s/a", d);
	b = xstrfmt("%s/b", d);
	c = xstrfmt("%s/c", d);
	big1 = xstrfmt("%s/big1", d);
	big2 = xstrfmt("%s/big2", d);
	assert_int_equal(write_file_atomic(a, "kernel", 6), 0);
	assert_int_equal(write_file_atomic(b, "kernel", 6), 0);
	assert_int_equal(write_file_atomic(c, "kernel!", 7), 0);
	assert_int_equal(files_identical(a, b), 1);
	assert_int_equal(files_identical(a, c), 0);
	/* past one read buffer, differing only in the last byte */
	buf = xmalloc(n);
	memset(buf, 'x', n);
	assert_int_equal(write_file_atomic(big1, buf, n), 0);
	buf[n - 1] = 'y';
	assert_int_equal(write_file_atomic(big2, buf, n), 0);
	assert_int_equal(files_identical(big1, big2), 0);
	assert_int_equal(files_identical(big1, big1), 1);
	assert_int_equal(files_identical(a, "/nonexistent/klab"), -1);
	free(buf);
	unlink(a); unlink(b); unlink(c); unlink(big1); unlink(big2);
	rmdir(d);
	free(a); free(b); free(c); free(big1); free(big2);
}

/* A table made with the enum macros: names both ways, a value without a
 * name (NULL) found by NULL, nothing outside the table. */
enum fruit { FRUIT_NONE, FRUIT_APPLE, FRUIT_PEAR, FRUIT_LAST };
KLAB_ENUM_DECL(fruit);
KLAB_ENUM_IMPL(fruit, FRUIT_LAST, NULL, "apple", "pear")

static void test_util__enum_table_maps_both_ways(void **state)
{
	(void)state;
	assert_string_equal(fruit_to_string(FRUIT_PEAR), "pear");
	assert_null(fruit_to_string(FRUIT_NONE));
	assert_null(fruit_to_string(FRUIT_LAST));
	assert_null(fruit_to_string(-1));
	assert_int_equal(fruit_from_string("apple"), FRUIT_APPLE);
	assert_int_equal(fruit_from_string("plum"), -1);
	assert_int_equal(fruit_from_string(NULL), FRUIT_NONE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strbuf__grows_and_formats),
		cmocka_unit_test(test_util__parse_uint_rejects_junk),
		cmocka_unit_test(test_util__find_executable),
		cmocka_unit_test(test_util__clean_text_replaces_every_control_character),
		cmocka_unit_test(test_util__shell_word_quotes_for_bash),
		cmocka_unit_test(test_util__url_redaction_cuts_credentials),
		cmocka_unit_test(test_run_command__exit_codes),
		cmocka_unit_test(test_run_command__signal_is_reported),
		cmocka_unit_test(test_run_command__timeout_kills_the_process_group),
		cmocka_unit_test(test_run_command__exec_failure_is_not_an_exit_code),
		cmocka_unit_test(test_run_command__env_cwd_and_output),
		cmocka_unit_test(test_run_command__streams_lines_and_still_logs),
		cmocka_unit_test(test_run_command__should_stop_cancels),
		cmocka_unit_test(test_util__write_file_atomic_and_read_limit),
		cmocka_unit_test(test_util__write_file_atomic_mode_replaces_a_public_file_privately),
		cmocka_unit_test(test_util__mkdir_p),
		cmocka_unit_test(test_util__process_gone),
		cmocka_unit_test(test_util__name_owner_pid),
		cmocka_unit_test(test_util__files_identical_compares_bytes),
		cmocka_unit_test(test_util__log_trim_keeps_head_and_tail),
		cmocka_unit_test(test_util__enum_table_maps_both_ways),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
