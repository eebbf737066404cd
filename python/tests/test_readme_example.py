"""The README's DDP example is the code CI runs (ctest python.readme_example): every line of the
README's Python block that holds code appears in python/examples/ddp_train.py, which the ctests
python.torch_ddp_2 and python.torch_ddp_4 run with torchrun.  Needs no PyTorch."""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main():
    with open(os.path.join(ROOT, "README.md")) as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    examples = [b for b in blocks if "acc.ddp.register" in b]
    if len(examples) != 1:
        print("README.md has %d Python blocks with acc.ddp.register, not one" % len(examples))
        return 1
    with open(os.path.join(ROOT, "python", "examples", "ddp_train.py")) as f:
        code = {line.strip() for line in f}
    missing = [line for line in examples[0].splitlines()
               if line.strip() and not line.strip().startswith("#") and line.strip() not in code]
    for line in missing:
        print("README.md's example has a line python/examples/ddp_train.py does not: " + line)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
