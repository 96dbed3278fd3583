fn main() {
    println!("chess-server: not yet");
}
