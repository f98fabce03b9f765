from anonbox.cli import main

main()
