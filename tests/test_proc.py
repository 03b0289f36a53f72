import sys

from ascenv import proc


def test_ok_captures_output():
    done = proc.run([sys.executable, "-c", "print('hi')"], timeout=30)
    assert done.ok and done.status == proc.OK
    assert done.stdout == "hi\n"


def test_missing_program_is_data_not_an_exception():
    done = proc.run(["/nonexistent/npu-smi", "info"], timeout=5)
    assert done.status == proc.NOT_FOUND and not done.ok
    assert "not found" in done.describe()


def test_nonzero_exit_keeps_streams():
    done = proc.run([sys.executable, "-c", "import sys; print('out'); sys.exit('boom')"], timeout=30)
    assert done.status == proc.EXIT and done.returncode == 1
    assert done.stdout == "out\n" and "boom" in done.stderr
    assert "exited 1" in done.describe()


def test_timeout_kills_and_reports():
    done = proc.run([sys.executable, "-c", "import time; time.sleep(30)"], timeout=0.5)
    assert done.status == proc.TIMEOUT and done.duration < 10


def test_undecodable_output_is_replaced():
    done = proc.run([sys.executable, "-c", "import sys; sys.stdout.buffer.write(b'\\xff ok')"], timeout=30)
    assert done.stdout == "\ufffd ok"


def test_os_error_is_data(tmp_path):
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    done = proc.run([str(script)], timeout=5)
    assert done.status == proc.OS_ERROR


def test_last_line_is_the_last_non_blank_line_stripped():
    describe = "command: npu-smi info\nresult: exited 255\nstdout: (none)\nstderr:\n    dcmi model initialized failed, because the device is used. ret is -8020\n\n"
    assert proc.last_line(describe) == "dcmi model initialized failed, because the device is used. ret is -8020"
    assert proc.last_line(" \n\n") == ""
