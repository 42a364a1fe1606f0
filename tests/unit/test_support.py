from support import CASES, case


def test_cases_folder_is_found():
    assert CASES.is_dir(), CASES
    assert case("warmup-first-call")
