import pytest
import schedlab as sl


@pytest.fixture(scope="session")
def up() -> sl.Machine:
    """A one-CPU machine."""
    return sl.Machine(1, 1, 1, name="1-cpu")
