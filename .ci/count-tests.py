"""Print how many tests under a directory ran in a pytest JUnit report, by outcome; exit 1 if none
ran or any failed or skipped. .ci/run uses it to show in the CI log that the SLURM tests ran."""

import sys
import xml.etree.ElementTree as ET


def main(report: str, prefix: str) -> int:
    dotted = prefix.strip("/").replace("/", ".") + "."
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    for case in ET.parse(report).iter("testcase"):
        if not case.get("classname", "").startswith(dotted):
            continue
        tags = {child.tag for child in case}
        outcome = "failed" if tags & {"failure", "error"} else "skipped" if "skipped" in tags else "passed"
        counts[outcome] += 1
    print(
        f"Tests under {prefix} in this run: {counts['passed']} ok, {counts['failed']} not ok, "
        f"{counts['skipped']} skipped"
    )
    return 0 if counts["passed"] and not counts["failed"] and not counts["skipped"] else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
